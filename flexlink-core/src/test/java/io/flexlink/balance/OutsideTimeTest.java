package io.flexlink.balance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The time a call spends outside the communicator (a multi-node call's inter-node stage) enters the fine
 * stage's model of the whole call, intra + outside: the more the call waits for that stage, the less a
 * share error inside the node matters, and the wider the dead band within which the shares are left alone.
 * Times are given, not measured: every case is exact.
 */
class OutsideTimeTest {
    private static final long BYTES = 1 << 20;

    /**
     * Path times under shares {pcie 0.30, primary 0.70} that make the equal-finish target pcie = 0.31: the
     * primary takes 1 ms, so its rate is 0.7/ms, and pcie's rate must be 0.31/0.69 of that.
     */
    private static float[] onePercentOff() {
        double primaryRate = 0.7 / 1e-3;
        double pcieRate = 0.31 / 0.69 * primaryRate;
        return new float[] {1e-3f, (float) (0.30 / pcieRate)};
    }

    /** Like {@link #onePercentOff}, for a target of pcie = 0.40: ten points off. */
    private static float[] tenPercentOff() {
        double primaryRate = 0.7 / 1e-3;
        double pcieRate = 0.40 / 0.60 * primaryRate;
        return new float[] {1e-3f, (float) (0.30 / pcieRate)};
    }

    @Test
    void theDeadBandGrowsWithTheShareOfTheCallSpentOutsideUpToItsCap() {
        assertEquals(BucketTuner.DEAD_BAND, BucketTuner.deadBand(1e-3, 0), 1e-12, "nothing outside: single-node band");
        assertEquals(BucketTuner.DEAD_BAND, BucketTuner.deadBand(1e-3, Double.NaN), 1e-12, "unknown outside");
        assertEquals(BucketTuner.DEAD_BAND, BucketTuner.deadBand(0, 5e-3), 1e-12, "nothing measured inside");
        assertEquals(BucketTuner.DEAD_BAND * 4, BucketTuner.deadBand(1e-3, 3e-3), 1e-12, "intra a quarter of the call");
        assertEquals(BucketTuner.MAX_DEAD_BAND, BucketTuner.deadBand(1e-3, 1.0), 1e-12, "capped");
    }

    @Test
    void aOnePercentShareErrorIsChasedAloneButNotWhenTheRailTakesNineTimesTheNodeStage() {
        BucketTuner alone = BucketTuner.restored(1, 24, new double[] {0.30});
        assertTrue(alone.decide(onePercentOff(), 0), "single node: a 1% error is beyond the 0.4% band");
        assertEquals(0.305, alone.shares()[0], 1e-9, "half-way to the target");

        BucketTuner railBound = BucketTuner.restored(1, 24, new double[] {0.30});
        int version = railBound.version();
        assertFalse(railBound.decide(onePercentOff(), 9e-3), "intra is a tenth of the call: band 4%");
        assertEquals(0.30, railBound.shares()[0], 0);
        assertEquals(version, railBound.version(), "no new version: the samples of these shares stay valid");
    }

    @Test
    void aLargeShareErrorIsStillFollowedWhateverTheRailTakes() {
        BucketTuner t = BucketTuner.restored(1, 24, new double[] {0.30});
        assertTrue(t.decide(tenPercentOff(), 1.0), "beyond the widest band");
        assertEquals(0.35, t.shares()[0], 1e-9);
    }

    /** An in-memory board of several ranks, driven from one thread: each rank publishes before anyone collects. */
    static final class MemoryBoard {
        final Map<String, float[]> entries = new HashMap<>();
        final int ranks;

        MemoryBoard(int ranks) {
            this.ranks = ranks;
        }

        BalanceBoard of(int rank) {
            return new BalanceBoard() {
                @Override
                public void publish(int channel, long decision, int version, float[] times) {
                    float[] e = times == null ? null : Arrays.copyOf(times, times.length + 1);
                    if (e != null) {
                        e[times.length] = version;
                    }
                    entries.put(channel + "/" + decision + "/" + rank, e);
                }

                @Override
                public boolean collect(int channel, long decision, int version, float[] maxTimes) {
                    Arrays.fill(maxTimes, Float.NaN);
                    boolean all = true;
                    for (int r = 0; r < ranks; r++) {
                        String key = channel + "/" + decision + "/" + r;
                        assertTrue(entries.containsKey(key), "rank " + r + " published " + key);
                        float[] e = entries.get(key);
                        if (e == null || e[e.length - 1] != version) {
                            all = false;
                            continue;
                        }
                        for (int p = 0; p < maxTimes.length; p++) {
                            if (!Float.isNaN(e[p]) && (Float.isNaN(maxTimes[p]) || e[p] > maxTimes[p])) {
                                maxTimes[p] = e[p];
                            }
                        }
                    }
                    return all;
                }
            };
        }
    }

    /** Two ranks' balancers restored at pcie 0.30, fed {@code calls} AllReduces timed {@link #onePercentOff}. */
    private static Balancer[] drive(int calls, float[] outsidePerRank) {
        MemoryBoard board = new MemoryBoard(2);
        Balancer[] b = new Balancer[2];
        for (int r = 0; r < 2; r++) {
            TuningTable table = new TuningTable();
            table.put(SizeBuckets.label(SizeBuckets.channel(Collective.ALL_REDUCE, BYTES)), new double[] {0.30});
            b[r] = new Balancer(List.of("pcie"), 1, 24, 0, board.of(r), table, t -> { });
        }
        double[] fractions = new double[1];
        for (int i = 0; i < calls; i++) {
            for (int r = 0; r < 2; r++) {
                int token = b[r].decide(Collective.ALL_REDUCE, BYTES, fractions);
                b[r].record(token, onePercentOff());
                if (!Float.isNaN(outsidePerRank[r])) {
                    b[r].outside(Collective.ALL_REDUCE, BYTES, outsidePerRank[r]);
                }
            }
        }
        return b;
    }

    private static double share(Balancer b) {
        double[] f = new double[1];
        b.current(Collective.ALL_REDUCE, BYTES, f);
        return f[0];
    }

    @Test
    void theBalancerAgreesTheRailTimeAcrossRanksAndLeavesANearlyRightSplitAlone() {
        Balancer[] single = drive(6, new float[] {Float.NaN, Float.NaN});
        assertNotEquals(0.30, share(single[0]), "without a rail time the 1% error is chased");
        assertEquals(share(single[0]), share(single[1]), "both ranks split alike");

        // only rank 1 measured the rail: the board's maximum hands it to rank 0's decision as well
        Balancer[] railBound = drive(6, new float[] {Float.NaN, 9e-3f});
        assertEquals(0.30, share(railBound[0]), 0, "rank 0 kept the split");
        assertEquals(0.30, share(railBound[1]), 0, "rank 1 kept the split");
        assertArrayEquals(new String[] {"FINE"}, railBound[0].stageTable().values().toArray(new String[0]));
    }

    @Test
    void theRailTimeIsShownInTheDecisionsHistory() {
        Balancer[] b = drive(6, new float[] {2e-3f, 1e-3f});
        // intra 1 ms, rail 2 ms: band 1.2%, the 1% error stays; a decision that moves is noted with it
        assertEquals(0.30, share(b[0]), 0);
        Balancer[] moved = drive(6, new float[] {0.2e-3f, 0.1e-3f});
        assertNotEquals(0.30, share(moved[0]), "a short rail (band 0.48%) leaves the 1% error beyond the band");
        assertTrue(moved[0].history().stream().anyMatch(h -> h.contains("outside=0.200ms")),
                "the agreed (largest) rail time is in the history: " + moved[0].history());
    }
}
