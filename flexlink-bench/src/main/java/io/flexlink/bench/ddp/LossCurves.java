package io.flexlink.bench.ddp;

/** Comparing loss curves of runs that differ only in the order of floating-point sums. */
final class LossCurves {
    private LossCurves() {
    }

    /** The largest {@code |a - b| / |b|} over the steps. */
    static double maxRelativeDifference(float[] a, float[] b) {
        if (a.length != b.length) {
            throw new AssertionError(a.length + " steps against " + b.length);
        }
        double worst = 0;
        for (int s = 0; s < a.length; s++) {
            worst = Math.max(worst, Math.abs((double) a[s] - b[s]) / Math.abs((double) b[s]));
        }
        return worst;
    }
}
