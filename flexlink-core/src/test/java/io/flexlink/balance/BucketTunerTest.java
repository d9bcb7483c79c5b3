package io.flexlink.balance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The tuner against a model of links: a path carrying share s of the bytes at rate B takes s/B + latency. */
class BucketTunerTest {
    /** Feeds the tuner model times until it stops changing (or {@code rounds} pass); returns rounds used. */
    static int run(BucketTuner t, double[] rate, double latency, double noise, Random random, int rounds) {
        int quiet = 0;
        for (int i = 0; i < rounds; i++) {
            float[] times = times(t, rate, latency, noise, random);
            boolean changed = t.decide(times);
            quiet = changed ? 0 : quiet + 1;
            if (quiet >= 5 && (t.stage() == BucketTuner.Stage.FINE || t.stage() == BucketTuner.Stage.PRIMARY_ONLY)) {
                return i;
            }
        }
        return rounds;
    }

    static float[] times(BucketTuner t, double[] rate, double latency, double noise, Random random) {
        int aux = rate.length - 1;
        double[] s = t.shares();
        double primary = 1;
        for (double v : s) {
            primary -= v;
        }
        float[] times = new float[aux + 1];
        times[0] = primary > 0 ? (float) ((primary / rate[0]) * (1 + noise * random.nextGaussian())) : Float.NaN;
        for (int i = 0; i < aux; i++) {
            times[i + 1] = s[i] > 0
                    ? (float) ((s[i] / rate[i + 1] + latency) * (1 + noise * random.nextGaussian())) : Float.NaN;
        }
        return times;
    }

    @Test
    void findsTheAnalyticOptimumForSeveralLinkRatios() {
        for (double[] rate : new double[][] {{4, 1}, {8, 1}, {1, 1}, {3, 2}}) {
            BucketTuner t = new BucketTuner(1, 24);
            int rounds = run(t, rate, 0, 0, new Random(1), 200);
            double optimum = rate[1] / (rate[0] + rate[1]);
            assertEquals(BucketTuner.Stage.FINE, t.stage());
            assertEquals(optimum, t.shares()[0], 0.01, "ratio " + rate[0] + ":" + rate[1]);
            assertTrue(rounds < 40, "converged in " + rounds + " rounds");
        }
    }

    @Test
    void splitsOverTwoAuxiliaryPaths() {
        BucketTuner t = new BucketTuner(2, 24);
        double[] rate = {6, 2, 1};
        run(t, rate, 0, 0, new Random(2), 200);
        assertEquals(2.0 / 9, t.shares()[0], 0.01);
        assertEquals(1.0 / 9, t.shares()[1], 0.01);
    }

    @Test
    void staysOnThePrimaryPathWhenSplittingDoesNotPay() {
        BucketTuner t = new BucketTuner(1, 24);
        run(t, new double[] {4, 1}, 0.5, 0, new Random(3), 200); // auxiliary latency dwarfs the transfer
        assertEquals(BucketTuner.Stage.PRIMARY_ONLY, t.stage());
        assertEquals(0, t.shares()[0]);
    }

    @Test
    void noiseDoesNotMakeItOscillate() {
        BucketTuner t = new BucketTuner(1, 24);
        Random random = new Random(4);
        run(t, new double[] {4, 1}, 0, 0.03, random, 200);
        double min = 1;
        double max = 0;
        for (int i = 0; i < 200; i++) {
            t.decide(times(t, new double[] {4, 1}, 0, 0.03, random));
            min = Math.min(min, t.shares()[0]);
            max = Math.max(max, t.shares()[0]);
        }
        assertTrue(max - min <= 0.04, "share moved between " + min + " and " + max);
        assertEquals(0.2, (min + max) / 2, 0.02);
    }

    @Test
    void followsAPathThatSlowsDown() {
        BucketTuner t = new BucketTuner(1, 24);
        run(t, new double[] {4, 1}, 0, 0, new Random(5), 200);
        int rounds = run(t, new double[] {4, 0.5}, 0, 0, new Random(5), 200);
        assertEquals(0.5 / 4.5, t.shares()[0], 0.01);
        assertTrue(rounds < 20, "re-converged in " + rounds + " rounds");
    }

    @Test
    void followsAPathThatSpeedsUp() {
        BucketTuner t = new BucketTuner(1, 24);
        run(t, new double[] {4, 0.5}, 0, 0, new Random(6), 200);
        assertEquals(0.5 / 4.5, t.shares()[0], 0.01);
        int rounds = run(t, new double[] {4, 2}, 0, 0, new Random(6), 200);
        assertEquals(2.0 / 6, t.shares()[0], 0.01);
        assertTrue(rounds < 20, "re-converged in " + rounds + " rounds");
    }

    @Test
    void restoredChannelsSkipTuning() {
        BucketTuner t = BucketTuner.restored(1, 24, new double[] {0.25});
        assertEquals(BucketTuner.Stage.FINE, t.stage());
        assertEquals(0.25, t.shares()[0]);
        assertEquals(BucketTuner.Stage.PRIMARY_ONLY, BucketTuner.restored(1, 24, null).stage());
    }
}
