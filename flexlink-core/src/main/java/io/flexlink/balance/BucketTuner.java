package io.flexlink.balance;

/**
 * The shares of one channel (collective and size bucket) and the two stages that choose them. Fed only
 * with measurements every rank agrees on, so every rank's tuner walks the same states.
 *
 * <ol>
 *   <li>Probe: each path alone for one round, giving its bandwidth {@code B_i}.</li>
 *   <li>Coarse (the paper's Algorithm 1): start each auxiliary share at half of
 *       {@code B_aux / ΣB}, then raise it round by round until an auxiliary path is the bottleneck (or the
 *       budget ends). If no split beat the primary path alone, the channel stays on the primary path.</li>
 *   <li>Fine (runtime adjustment): each path's rate {@code share / time}, smoothed, gives the shares that
 *       make all paths finish together; the shares move half-way there, and not at all when within a
 *       dead band, so noise does not make them oscillate and a path that slows down is followed.</li>
 * </ol>
 */
public final class BucketTuner {
    /** Stages of a channel. */
    public enum Stage { PROBE, COARSE, FINE, PRIMARY_ONLY }

    /** Smallest share change the fine stage makes when nothing runs outside the communicator's call. */
    static final double DEAD_BAND = 0.004;
    /** The widest the dead band grows with time spent outside the call, so that a path that slows is still followed. */
    static final double MAX_DEAD_BAND = 0.04;
    /** How far toward the equal-finish target each fine round moves. */
    static final double GAIN = 0.5;
    /** Weight of a new rate measurement in the smoothed rate. */
    static final double SMOOTHING = 0.5;
    /** A split must beat the primary path alone by this factor to be kept. */
    static final double MUST_BEAT = 0.98;

    private final int aux;
    private final int budget;
    private Stage stage;
    private int probe;
    private final double[] probeRate;
    private final double[] shares;
    private final double[] step;
    private final double[] smoothedRate;
    private final double[] rate;
    private final double[] target;
    private boolean smoothed;
    private int coarseRounds;
    private double primaryAlone = Double.NaN;
    private double bestSplit = Double.POSITIVE_INFINITY;
    private int version = 1;

    /** A channel starting from scratch: probing the primary path alone. */
    public BucketTuner(int auxPaths, int budget) {
        this.aux = auxPaths;
        this.budget = budget;
        this.stage = Stage.PROBE;
        this.probeRate = new double[aux + 1];
        this.shares = new double[aux];
        this.step = new double[aux];
        this.smoothedRate = new double[aux + 1];
        this.rate = new double[aux + 1];
        this.target = new double[aux];
    }

    /** A channel restored from the tuning cache (null shares: primary only). */
    public static BucketTuner restored(int auxPaths, int budget, double[] cached) {
        BucketTuner t = new BucketTuner(auxPaths, budget);
        if (cached == null) {
            t.stage = Stage.PRIMARY_ONLY;
        } else {
            System.arraycopy(cached, 0, t.shares, 0, auxPaths);
            t.stage = Stage.FINE;
        }
        return t;
    }

    /** A channel known not to benefit from splitting. */
    public static BucketTuner primaryOnly(int auxPaths, int budget) {
        return restored(auxPaths, budget, null);
    }

    public Stage stage() {
        return stage;
    }

    /** Auxiliary shares in force. */
    public double[] shares() {
        return shares;
    }

    /** Increases whenever the shares change; measurements are only used with the version they were taken under. */
    public int version() {
        return version;
    }

    private double sum() {
        double s = 0;
        for (double v : shares) {
            s += v;
        }
        return s;
    }

    /**
     * Takes one agreed measurement: {@code times[0]} the primary path's, {@code times[i]} auxiliary path
     * {@code i-1}'s completion time (seconds), under the current shares.
     *
     * @return true when the shares changed
     */
    public boolean decide(float[] times) {
        return decide(times, 0);
    }

    /**
     * {@link #decide(float[])} for a call whose result also waits for {@code outsideSeconds} of work outside
     * this communicator (a multi-node call's inter-node stage, agreed like the times): the fine stage then
     * weighs a share error by its effect on the whole call, intra + outside ({@link #deadBand}). Probe and
     * coarse stages ignore it: whether a split pays is judged on this communicator's own time, so that a
     * real gain is never given up because another stage is slow (rule 7).
     */
    public boolean decide(float[] times, double outsideSeconds) {
        switch (stage) {
            case PROBE: return probeStep(times);
            case COARSE: return coarseStep(times);
            case FINE: return fineStep(times, outsideSeconds);
            default: return false;
        }
    }

    /**
     * The fine stage's dead band for a call whose paths took {@code intraSeconds} (the slowest) and whose
     * result waits {@code outsideSeconds} more: a share error moves the intra time roughly in proportion, and
     * the whole call by that over {@code intra + outside}, so the band that keeps the whole call within the
     * single-node tolerance is {@link #DEAD_BAND} scaled by {@code (intra + outside) / intra}, at most
     * {@link #MAX_DEAD_BAND}.
     */
    static double deadBand(double intraSeconds, double outsideSeconds) {
        if (!(outsideSeconds > 0) || !(intraSeconds > 0)) {
            return DEAD_BAND; // NaN, nothing outside, or nothing measured inside: the single-node band
        }
        return Math.min(MAX_DEAD_BAND, DEAD_BAND * (intraSeconds + outsideSeconds) / intraSeconds);
    }

    private boolean probeStep(float[] t) {
        double time = t[probe];
        probeRate[probe] = time > 0 ? 1.0 / time : 0;
        if (probe == 0) {
            primaryAlone = time;
        }
        java.util.Arrays.fill(shares, 0);
        probe++;
        if (probe <= aux) {
            shares[probe - 1] = 1.0; // the next path alone
        } else {
            double total = 0;
            for (double r : probeRate) {
                total += r;
            }
            for (int i = 0; i < aux; i++) {
                double analytic = total > 0 ? probeRate[i + 1] / total : 0;
                shares[i] = round(0.5 * analytic);
                step[i] = shares[i] / 3;
            }
            stage = Stage.COARSE;
            if (sum() == 0) {
                stage = Stage.PRIMARY_ONLY;
            }
        }
        version++;
        return true;
    }

    private boolean coarseStep(float[] t) {
        coarseRounds++;
        double auxMax = 0;
        for (int i = 0; i < aux; i++) {
            if (shares[i] > 0 && !Float.isNaN(t[i + 1])) {
                auxMax = Math.max(auxMax, t[i + 1]);
            }
        }
        double primary = Float.isNaN(t[0]) ? 0 : t[0];
        bestSplit = Math.min(bestSplit, Math.max(primary, auxMax));
        boolean auxBottleneck = auxMax >= primary;
        if (auxBottleneck || coarseRounds >= budget || sum() >= 0.95) {
            if (!(bestSplit < primaryAlone * MUST_BEAT)) {
                java.util.Arrays.fill(shares, 0);
                stage = Stage.PRIMARY_ONLY;
                version++;
                return true;
            }
            stage = Stage.FINE;
            return false;
        }
        for (int i = 0; i < aux; i++) {
            shares[i] = round(Math.min(shares[i] + step[i], 0.95));
        }
        version++;
        return true;
    }

    private boolean fineStep(float[] t, double outsideSeconds) {
        double intra = 0;
        for (int i = 0; i <= aux; i++) {
            intra = Float.isNaN(t[i]) ? intra : Math.max(intra, t[i]);
        }
        double band = deadBand(intra, outsideSeconds);
        double primaryShare = 1 - sum();
        rate[0] = primaryShare > 0 && t[0] > 0 ? primaryShare / t[0] : 0;
        for (int i = 0; i < aux; i++) {
            rate[i + 1] = shares[i] > 0 && t[i + 1] > 0 ? shares[i] / t[i + 1] : 0;
        }
        double total = 0;
        for (int i = 0; i <= aux; i++) {
            smoothedRate[i] = smoothed ? (1 - SMOOTHING) * smoothedRate[i] + SMOOTHING * rate[i] : rate[i];
            total += smoothedRate[i];
        }
        smoothed = true;
        if (total <= 0) {
            return false;
        }
        double largest = 0;
        for (int i = 0; i < aux; i++) {
            target[i] = smoothedRate[i + 1] / total;
            largest = Math.max(largest, Math.abs(target[i] - shares[i]));
        }
        if (largest <= band) {
            return false;
        }
        for (int i = 0; i < aux; i++) {
            shares[i] = round(shares[i] + GAIN * (target[i] - shares[i]));
        }
        version++;
        return true;
    }

    /** Shares are kept to 1e-4 so that logs and caches show what is used. */
    private static double round(double v) {
        return Math.max(0, Math.round(v * 1e4) / 1e4);
    }

    @Override
    public String toString() {
        return stage + " v" + version + " " + java.util.Arrays.toString(shares);
    }
}
