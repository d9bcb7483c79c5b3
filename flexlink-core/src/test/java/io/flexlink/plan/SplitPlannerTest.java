package io.flexlink.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** The split of a call's range between the paths: exact arithmetic every rank repeats identically. */
class SplitPlannerTest {
    private static CallPlan plan(Collective c, DataType type, long count, double... fractions) {
        CallPlan p = new CallPlan(fractions.length);
        p.call.set(c, 1, 2, count, type, ReduceOp.SUM, 0, null);
        System.arraycopy(fractions, 0, p.fractions, 0, fractions.length);
        return p;
    }

    @Property
    void rangesCoverTheCallAlignedAndInProportion(@ForAll @LongRange(min = 0, max = 1L << 34) long count,
                                                  @ForAll @DoubleRange(min = 0, max = 1) double share,
                                                  @ForAll @IntRange(min = 0, max = 11) int typeIndex,
                                                  @ForAll @IntRange(min = 1, max = 8) int ranks) {
        DataType type = DataType.values()[typeIndex];
        CallPlan p = plan(Collective.ALL_REDUCE, type, count, share);
        new SplitPlanner(true, 0, ranks).plan(p);
        long align = Math.max(1, 256 / type.size());
        assertEquals(count, p.lengths[0] + p.lengths[1], "every element goes to exactly one path");
        assertEquals(0, p.lengths[1] % align, "an auxiliary range starts and ends on 256-byte boundaries");
        assertEquals((long) Math.floor(count * share / align) * align, p.lengths[1]);
        assertEquals(p.lengths[1] > 0, p.split);
    }

    @Property
    void withoutAPrimaryTheAuxiliaryPathsCarryEverything(@ForAll @LongRange(min = 1, max = 1L << 30) long count,
                                                         @ForAll @DoubleRange(min = 0, max = 1) double a,
                                                         @ForAll @DoubleRange(min = 0, max = 1) double b) {
        CallPlan p = plan(Collective.ALL_GATHER, DataType.FLOAT32, count, a, b);
        new SplitPlanner(false, 1 << 20, 3).plan(p);
        assertEquals(0, p.lengths[0]);
        assertEquals(count, p.lengths[1] + p.lengths[2]);
        assertTrue(p.lengths[1] >= 0 && p.lengths[2] >= 0);
        assertTrue(p.split);
    }

    @Test
    void belowTheSplitThresholdThePrimaryTakesAll() {
        // AllGather's size is the gathered buffer: 3 ranks x 100 K floats = 1.2 MB > 1 MB, one rank's 400 KB < 1 MB
        CallPlan gathered = plan(Collective.ALL_GATHER, DataType.FLOAT32, 100_000, 0.5);
        new SplitPlanner(true, 1 << 20, 3).plan(gathered);
        assertTrue(gathered.split);
        CallPlan small = plan(Collective.ALL_REDUCE, DataType.FLOAT32, 100_000, 0.5);
        new SplitPlanner(true, 1 << 20, 3).plan(small);
        assertFalse(small.split);
        assertEquals(100_000, small.lengths[0]);
        assertEquals(0, small.lengths[1]);
    }

    @Test
    void twoAuxiliaryPathsTakeTheirSharesInOrder() {
        CallPlan p = plan(Collective.ALL_REDUCE, DataType.INT8, 10_000, 0.25, 0.5);
        new SplitPlanner(true, 0, 2).plan(p);
        assertEquals(2304, p.lengths[1]); // floor(2500 / 256) * 256
        assertEquals(4864, p.lengths[2]); // floor(5000 / 256) * 256
        assertEquals(10_000 - 2304 - 4864, p.lengths[0]);
        assertEquals(10_000 - 4864 - 2304 + 0, p.auxOffset(0));
        assertEquals(p.lengths[0] + 2304, p.auxOffset(1));
    }
}
