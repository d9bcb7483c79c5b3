package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The raw NCCL baseline's communicators on CUDA, decided without a GPU: which ranks this process opens,
 * the color and key each passes to ncclCommSplit with NCCL_TESTS_SPLIT, and the refusal of several ranks
 * on one GPU. NCCL ranks a color's members by key (ties by parent rank), so the sub-communicator ranks it
 * gives are computed here by that rule and compared with the {@link RankLayout} FlexLink's side and the
 * workspace use.
 */
class RawNcclPlanTest {
    private static RankLayout layout(String split, int worldSize) {
        TestsSplit s = TestsSplit.fromEnvironment(split == null ? Map.of() : Map.of(TestsSplit.SPLIT, split));
        return s == null ? RankLayout.whole(worldSize) : RankLayout.split(s, worldSize);
    }

    /** The rank NCCL gives local communicator {@code i} in its child: its place by (key, parent rank) among its color. */
    private static int ncclChildRank(RawNcclPlan p, int i) {
        int below = 0;
        for (int j = 0; j < p.ranks.length; j++) {
            boolean before = p.keys[j] < p.keys[i] || (p.keys[j] == p.keys[i] && p.ranks[j] < p.ranks[i]);
            if (p.colors[j] == p.colors[i] && before) {
                below++;
            }
        }
        return below;
    }

    @Test
    void withoutSplitTheRanksOfOneProcessAreOpenedUnsplit() {
        RawNcclPlan p = RawNcclPlan.of(layout(null, 4), new int[] {0, 1, 2, 3}, 0, false);
        assertNull(p.refusal);
        assertArrayEquals(new int[] {0, 1, 2, 3}, p.ranks);
        assertNull(p.colors);
        assertNull(p.keys);
    }

    @Test
    void oneProcessSplitsItsRanksAsFlexLinkDoes() {
        for (String split : new String[] {"MOD 2", "DIV 2", "AND 0x2", "OR 1"}) {
            RankLayout l = layout(split, 4);
            RawNcclPlan p = RawNcclPlan.of(l, new int[] {0, 1, 2, 3}, 0, false);
            assertNull(p.refusal, split);
            for (int i = 0; i < 4; i++) {
                assertEquals(l.color(i), p.colors[i], split + " color of rank " + i);
                assertEquals(l.commRank(i), ncclChildRank(p, i), split + " child rank of rank " + i);
            }
        }
        RawNcclPlan mod = RawNcclPlan.of(layout("MOD 2", 4), new int[] {0, 1, 2, 3}, 0, false);
        assertArrayEquals(new int[] {0, 1, 0, 1}, mod.colors);
        assertArrayEquals(new int[] {0, 1, 2, 3}, mod.keys);
        RawNcclPlan div = RawNcclPlan.of(layout("DIV 2", 4), new int[] {0, 1, 2, 3}, 0, false);
        assertArrayEquals(new int[] {0, 0, 1, 1}, div.colors);
    }

    @Test
    void aFromEnvProcessSplitsItsOneRankByItsJobRank() {
        RankLayout l = layout("MOD 2", 4);
        RawNcclPlan p = RawNcclPlan.of(l, new int[] {3}, 3, true);
        assertNull(p.refusal);
        assertArrayEquals(new int[] {3}, p.ranks);
        assertArrayEquals(new int[] {1}, p.colors);
        assertArrayEquals(new int[] {3}, p.keys);
        // job ranks 1 and 3 form color 1; rank 3 is second there, as NCCL orders keys 1 < 3
        assertEquals(1, l.commRank(3));
    }

    @Test
    void oneRankOnOneGpuSplitsIntoASubCommunicatorOfOne() {
        // the form that runs on a single GPU: -g 1 with a split of the one rank
        RawNcclPlan p = RawNcclPlan.of(layout("AND 0", 1), new int[] {0}, 0, false);
        assertNull(p.refusal);
        assertArrayEquals(new int[] {0}, p.colors);
        assertArrayEquals(new int[] {0}, p.keys);
    }

    @Test
    void severalRanksOnOneGpuAreRefusedWithOrWithoutSplit() {
        for (String split : new String[] {null, "MOD 2"}) {
            RawNcclPlan p = RawNcclPlan.of(layout(split, 2), new int[] {0, 0}, 0, false);
            assertTrue(p.refusal != null && p.refusal.contains("several ranks on one GPU"), split + ": " + p.refusal);
            assertNull(p.colors, split);
            assertEquals(0, p.ranks.length, split);
        }
        // one rank per process on device 0 each is NCCL's to judge (it sees the processes), not this plan's
        assertNull(RawNcclPlan.of(layout("MOD 2", 2), new int[] {0}, 1, true).refusal);
    }
}
