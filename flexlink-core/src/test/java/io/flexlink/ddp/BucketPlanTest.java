package io.flexlink.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Buffer;
import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The assignment of parameters to buckets: pure logic, no device. */
class BucketPlanTest {
    /** Parameters of {@code bytes} bytes each (FLOAT32), laid out back to back from a fake address, or with gaps. */
    static List<Parameter> params(long[] bytes, boolean gaps, DataType... types) {
        List<Parameter> out = new ArrayList<>();
        long at = 1L << 20;
        for (int i = 0; i < bytes.length; i++) {
            DataType t = types.length == 0 ? DataType.FLOAT32 : types[i];
            out.add(new Parameter(null, i, "p" + i, Buffer.wrap(at, bytes[i], 0), bytes[i] / t.size(), t));
            at += bytes[i] + (gaps ? 64 : 0);
        }
        return out;
    }

    @Test
    void defaultsAreDdpsOneAndTwentyFiveMebibytes() {
        FlexLinkConfig c = FlexLinkConfig.builder().environment(Map.of()).build();
        assertEquals(1L << 20, c.get(FlexLinkConfig.DDP_FIRST_BUCKET_CAP));
        assertEquals(25L << 20, c.get(FlexLinkConfig.DDP_BUCKET_CAP));
        assertEquals(4L << 20, FlexLinkConfig.builder().environment(Map.of("FLEXLINK_DDP_BUCKET_CAP", "4M")).build()
                .get(FlexLinkConfig.DDP_BUCKET_CAP));
    }

    @Test
    void bucketsFollowReverseModelOrderAndCloseAtTheirCaps() {
        List<Parameter> p = params(new long[] {400, 400, 400, 400, 400}, false);
        BucketPlan plan = BucketPlan.of(p, BucketPlan.reverseOrder(5), 500, 1000);
        assertEquals(2, plan.buckets());
        assertArrayEquals(new int[] {3, 4}, plan.members[0], "the small first bucket: the last layer, ready first");
        assertArrayEquals(new int[] {0, 1, 2}, plan.members[1]);
        assertEquals(800, plan.bytes[0]);
        assertEquals(1200, plan.bytes[1], "a bucket closes once it reaches the cap, with the gradient that reached it");
        assertEquals(1, plan.bucketOf[0]);
        assertEquals(0, plan.elementOffset[0], "model order inside the bucket");
        assertEquals(200, plan.elementOffset[2]);
    }

    @Test
    void aGradientLargerThanTheCapGetsABucketOfItsOwn() {
        List<Parameter> p = params(new long[] {100, 5000, 100}, false);
        BucketPlan plan = BucketPlan.of(p, BucketPlan.reverseOrder(3), 50, 1000);
        assertArrayEquals(new int[] {2}, plan.members[0]);
        assertArrayEquals(new int[] {1}, plan.members[1]);
        assertArrayEquals(new int[] {0}, plan.members[2]);
    }

    @Test
    void typesNeverShareABucketAndBucketsLaunchInTheOrderTheyComplete() {
        List<Parameter> p = params(new long[] {400, 200, 400, 200}, false,
                DataType.FLOAT32, DataType.BFLOAT16, DataType.FLOAT32, DataType.BFLOAT16);
        BucketPlan plan = BucketPlan.of(p, new int[] {3, 2, 1, 0}, 10_000, 10_000);
        assertEquals(2, plan.buckets());
        assertArrayEquals(new int[] {1, 3}, plan.members[0], "bf16: its last gradient (p1) comes before p0");
        assertEquals(DataType.BFLOAT16, plan.type[0]);
        assertArrayEquals(new int[] {0, 2}, plan.members[1]);
        assertEquals(DataType.FLOAT32, plan.type[1]);
    }

    @Test
    void aBucketIsInPlaceWhenItsGradientsAreOneRangeInModelOrder() {
        List<Parameter> flat = params(new long[] {400, 400, 400}, false);
        BucketPlan plan = BucketPlan.of(flat, BucketPlan.reverseOrder(3), 10_000, 10_000);
        assertTrue(plan.inPlace[0]);
        assertEquals(flat.get(0).gradient().address(), plan.base[0]);
        BucketPlan gaps = BucketPlan.of(params(new long[] {400, 400, 400}, true), BucketPlan.reverseOrder(3),
                10_000, 10_000);
        assertFalse(gaps.inPlace[0]);
        // p0 and p2 are not neighbours: a rebuilt bucket {p0, p2} is copied
        BucketPlan skipping = BucketPlan.of(flat, new int[] {0, 2, 1}, 800, 10_000);
        assertArrayEquals(new int[] {0, 2}, skipping.members[0]);
        assertFalse(skipping.inPlace[0]);
        assertTrue(skipping.inPlace[1]);
    }

    @Test
    void theHashSeesOrderSizeAndBoundaries() {
        List<Parameter> p = params(new long[] {400, 400, 800}, false);
        long base = BucketPlan.of(p, BucketPlan.reverseOrder(3), 500, 1000).hash;
        assertEquals(base, BucketPlan.of(params(new long[] {400, 400, 800}, true), BucketPlan.reverseOrder(3), 500,
                1000).hash, "addresses do not matter");
        assertNotEquals(base, BucketPlan.of(p, new int[] {0, 1, 2}, 500, 1000).hash);
        assertNotEquals(base, BucketPlan.of(p, BucketPlan.reverseOrder(3), 5000, 1000).hash);
        assertNotEquals(base, BucketPlan.of(params(new long[] {400, 800, 400}, false), BucketPlan.reverseOrder(3), 500,
                1000).hash);
    }
}
