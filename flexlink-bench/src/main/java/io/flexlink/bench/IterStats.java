package io.flexlink.bench;

import java.util.Arrays;

/**
 * -I: the statistics of per-iteration times, as nccl-tests computes them: min, max, nearest-rank
 * percentiles (p99 may equal max below 100 samples), mean, and the population standard deviation;
 * cv% is stdev / mean x 100. Times in seconds.
 */
final class IterStats {
    /** Every iteration's time (the slowest rank's), including the skipped ones. */
    final double[] times;
    /** Leading iterations left out of the statistics (-K). */
    final int skipped;
    final double min;
    final double max;
    final double p50;
    final double p95;
    final double p99;
    final double mean;
    final double stdev;

    IterStats(double[] times, int skipped) {
        this.times = times.clone();
        this.skipped = skipped;
        double[] s = Arrays.copyOfRange(times, skipped, times.length);
        Arrays.sort(s);
        int n = s.length;
        min = s[0];
        max = s[n - 1];
        p50 = s[n / 2];
        p95 = s[percentileIndex(n, 95)];
        p99 = s[percentileIndex(n, 99)];
        double sum = 0;
        for (double v : s) {
            sum += v;
        }
        mean = sum / n;
        double var = 0;
        for (double v : s) {
            var += (v - mean) * (v - mean);
        }
        stdev = Math.sqrt(var / n);
    }

    /** The nearest-rank index of the {@code percentile}th percentile of {@code n} sorted samples. */
    static int percentileIndex(int n, int percentile) {
        return Math.min(n - 1, (n * percentile + 99) / 100 - 1);
    }

    /** stdev / mean in percent (0 for a zero mean). */
    double cvPercent() {
        return mean > 0 ? stdev / mean * 100 : 0;
    }

    /** The slowest of {@code a[i]} and {@code b[i]} per iteration (ranks, threads or processes combined). */
    static double[] maxPerIteration(double[] a, double[] b) {
        double[] out = a.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.max(out[i], b[i]);
        }
        return out;
    }
}
