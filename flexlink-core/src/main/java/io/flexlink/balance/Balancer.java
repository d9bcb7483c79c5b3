package io.flexlink.balance;

import io.flexlink.Collective;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two-stage balancer: per channel (collective, size bucket) a {@link BucketTuner}, fed at decision
 * points with measurements that all ranks agree on.
 *
 * <p>Agreement: every rank counts its calls per channel, and these counts are the same on every rank
 * (the same calls are made everywhere). Every {@code window} calls is a decision point {@code d}: the rank
 * reads every rank's entry {@code d-1} from the {@link BalanceBoard}, and when all of them carry a
 * measurement of the current share version it takes the per-path maximum and lets the tuner decide; then
 * it publishes its own latest measurement as entry {@code d}. The new shares apply from that call on, a
 * call index every rank knows, and every rank computes them from the same numbers with the same code.
 * A rank's local timing alone never changes its split.
 */
public final class Balancer implements Shares {
    private static final Logger LOG = LoggerFactory.getLogger(Balancer.class);
    private static final int SAMPLES = 8;
    /** Decisions kept for stats (the oldest are dropped). */
    private static final int MAX_HISTORY = 1000;

    private final int aux;
    private final List<String> pathNames;
    private final int window;
    private final int budget;
    private final long minSplitBytes;
    private final BalanceBoard board;
    private final TuningTable table;
    private final Consumer<TuningTable> onTuned;
    private final BucketTuner[] tuners = new BucketTuner[SizeBuckets.channels()];
    private final long[] calls = new long[SizeBuckets.channels()];
    private final float[][][] samples = new float[SizeBuckets.channels()][][];
    private final int[] sampleCount = new int[SizeBuckets.channels()];
    /** Per channel, this rank's latest times outside the communicator ({@link #outside}); kept across versions. */
    private final float[][] outsideSamples = new float[SizeBuckets.channels()][];
    private final int[] outsideCount = new int[SizeBuckets.channels()];
    private final int[] primaryOnlyUpTo = new int[Collective.values().length];
    private final float[] agreed;
    private final float[] local;
    private final float[] column = new float[SAMPLES];
    private final List<String> history = new ArrayList<>();

    /**
     * @param auxNames the auxiliary paths, in the communicator's order
     * @param onTuned called with the table when a channel finishes coarse tuning (rank 0 persists it)
     */
    public Balancer(List<String> auxNames, int window, int budget, long minSplitBytes, BalanceBoard board,
                    TuningTable table, Consumer<TuningTable> onTuned) {
        this.aux = auxNames.size();
        this.pathNames = new ArrayList<>();
        this.pathNames.add("primary");
        this.pathNames.addAll(auxNames);
        this.window = window;
        this.budget = budget;
        this.minSplitBytes = minSplitBytes;
        this.board = board;
        this.table = table;
        this.onTuned = onTuned;
        this.agreed = new float[boardColumns(aux)];
        this.local = new float[boardColumns(aux)];
        Arrays.fill(primaryOnlyUpTo, -1);
    }

    /**
     * The columns of a board entry for {@code auxPaths} auxiliary paths: the primary's time, each auxiliary
     * path's, and the time outside the communicator ({@link #outside}), all agreed by their maximum.
     */
    public static int boardColumns(int auxPaths) {
        return auxPaths + 2;
    }

    /** A token names the channel and the share version the call was made under. */
    private static final int VERSION_BITS = 20;

    @Override
    public synchronized int decide(Collective collective, long bytes, double[] fractions) {
        int ch = SizeBuckets.channel(collective, bytes);
        if (bytes < minSplitBytes) {
            Arrays.fill(fractions, 0);
            return -1;
        }
        BucketTuner t = tuner(ch);
        if (t.stage() == BucketTuner.Stage.PRIMARY_ONLY) {
            Arrays.fill(fractions, 0);
            return -1;
        }
        long k = calls[ch]++;
        if (k > 0 && k % window == 0) {
            decisionPoint(ch, t, k / window);
        }
        System.arraycopy(t.shares(), 0, fractions, 0, aux);
        return t.stage() == BucketTuner.Stage.PRIMARY_ONLY ? -1
                : ch << VERSION_BITS | (t.version() & ((1 << VERSION_BITS) - 1));
    }

    @Override
    public synchronized void current(Collective collective, long bytes, double[] fractions) {
        BucketTuner t = bytes < minSplitBytes ? null : tuners[SizeBuckets.channel(collective, bytes)];
        if (t == null || t.stage() == BucketTuner.Stage.PRIMARY_ONLY) {
            Arrays.fill(fractions, 0);
        } else {
            System.arraycopy(t.shares(), 0, fractions, 0, aux);
        }
    }

    @Override
    public boolean timed() {
        return true;
    }

    private BucketTuner tuner(int ch) {
        BucketTuner t = tuners[ch];
        if (t == null) {
            String label = SizeBuckets.label(ch);
            int c = SizeBuckets.collective(ch).ordinal();
            if (table.contains(label)) {
                t = BucketTuner.restored(aux, budget, table.get(label));
            } else if (SizeBuckets.bucketOf(ch) <= primaryOnlyUpTo[c]) {
                t = BucketTuner.primaryOnly(aux, budget); // learned: splitting did not pay at a larger size
            } else {
                t = new BucketTuner(aux, budget);
            }
            tuners[ch] = t;
            samples[ch] = new float[aux + 1][SAMPLES];
            outsideSamples[ch] = new float[SAMPLES];
            note(ch, t, t.stage() == BucketTuner.Stage.PROBE ? "start" : "from cache or threshold", null);
        }
        return t;
    }

    private void decisionPoint(int ch, BucketTuner t, long d) {
        // entries are published from the first decision point (d = 1) on
        if (d >= 2 && board.collect(ch, d - 1, t.version(), agreed)) {
            BucketTuner.Stage before = t.stage();
            boolean changed = t.decide(agreed, agreed[aux + 1]); // NaN outside: a single-node decision
            if (changed || t.stage() != before) {
                sampleCount[ch] = 0;
                note(ch, t, "decided", agreed);
                boolean settledNow = t.stage() != before && (t.stage() == BucketTuner.Stage.FINE
                        || t.stage() == BucketTuner.Stage.PRIMARY_ONLY);
                if (settledNow || (changed && t.stage() == BucketTuner.Stage.FINE)) {
                    // the cache follows the fine stage too, so that a restart resumes where it converged
                    tuned(ch, t, settledNow);
                }
            }
        }
        board.publish(ch, d, t.version(), measurement(ch) ? local : null);
    }

    private void tuned(int ch, BucketTuner t, boolean firstTime) {
        String label = SizeBuckets.label(ch);
        boolean primary = t.stage() == BucketTuner.Stage.PRIMARY_ONLY;
        if (primary) {
            int c = SizeBuckets.collective(ch).ordinal();
            primaryOnlyUpTo[c] = Math.max(primaryOnlyUpTo[c], SizeBuckets.bucketOf(ch));
        }
        table.put(label, primary ? null : t.shares());
        if (firstTime) {
            LOG.info("BALANCE {} tuned: {}", label, primary ? "primary only" : describe(t.shares()));
        }
        onTuned.accept(table);
    }

    /**
     * The lower median of the slowest path's time over this rank's samples of the call's channel (the paths run
     * side by side, so a call takes as long as its slowest); NaN without samples of the current shares.
     */
    @Override
    public synchronized double estimateSeconds(Collective collective, long bytes) {
        int ch = SizeBuckets.channel(collective, bytes);
        int n = samples[ch] == null ? 0 : Math.min(sampleCount[ch], SAMPLES);
        if (n == 0) {
            return Double.NaN;
        }
        float[] slowest = new float[n];
        for (int i = 0; i < n; i++) {
            for (int p = 0; p <= aux; p++) {
                float t = samples[ch][p][i];
                slowest[i] = Float.isNaN(t) ? slowest[i] : Math.max(slowest[i], t);
            }
        }
        Arrays.sort(slowest);
        return slowest[(n - 1) / 2];
    }

    /** The median per path of this rank's samples of the current version, into {@link #local}. */
    private boolean measurement(int ch) {
        int n = Math.min(sampleCount[ch], SAMPLES);
        if (n == 0) {
            return false;
        }
        for (int p = 0; p <= aux; p++) {
            System.arraycopy(samples[ch][p], 0, column, 0, n);
            Arrays.sort(column, 0, n);
            local[p] = column[(n - 1) / 2]; // the lower median: a JIT or GC pause only ever slows a call
        }
        int m = Math.min(outsideCount[ch], SAMPLES);
        local[aux + 1] = Float.NaN;
        if (m > 0) {
            System.arraycopy(outsideSamples[ch], 0, column, 0, m);
            Arrays.sort(column, 0, m);
            local[aux + 1] = column[(m - 1) / 2];
        }
        return true;
    }

    /**
     * A completed call's per-path times (seconds; NaN for a path that carried nothing), measured under the
     * share version its token names. Samples of an older version are dropped.
     */
    @Override
    public synchronized void record(int token, float[] times) {
        int channel = token >>> VERSION_BITS;
        int version = token & ((1 << VERSION_BITS) - 1);
        BucketTuner t = tuners[channel];
        if (t == null || (t.version() & ((1 << VERSION_BITS) - 1)) != version) {
            return;
        }
        int i = sampleCount[channel] % SAMPLES;
        for (int p = 0; p <= aux; p++) {
            samples[channel][p][i] = times[p];
        }
        sampleCount[channel]++;
    }

    /**
     * This rank's time outside the communicator around a call of the channel (the inter-node stage of the
     * multi-node call it was part of): published with the path times and agreed by its maximum, it widens
     * the fine stage's dead band ({@link BucketTuner#deadBand}). Ignored for a channel never decided here.
     */
    @Override
    public synchronized void outside(Collective collective, long bytes, float seconds) {
        int ch = SizeBuckets.channel(collective, bytes);
        if (bytes < minSplitBytes || outsideSamples[ch] == null || !(seconds >= 0)) {
            return;
        }
        outsideSamples[ch][outsideCount[ch]++ % SAMPLES] = seconds;
    }

    private void note(int ch, BucketTuner t, String what, float[] times) {
        StringBuilder sb = new StringBuilder();
        sb.append(SizeBuckets.label(ch)).append(" call ").append(calls[ch]).append(' ').append(what).append(": ")
                .append(t.stage()).append(" v").append(t.version()).append(' ').append(describe(t.shares()));
        if (times != null) {
            sb.append(" from times");
            for (int p = 0; p <= aux; p++) {
                sb.append(' ').append(pathNames.get(p)).append('=')
                        .append(String.format(Locale.ROOT, "%.3fms", times[p] * 1e3));
            }
            if (!Float.isNaN(times[aux + 1])) {
                sb.append(" outside=").append(String.format(Locale.ROOT, "%.3fms", times[aux + 1] * 1e3));
            }
        }
        if (history.size() == MAX_HISTORY) {
            history.remove(0);
        }
        history.add(sb.toString());
        if (t.stage() == BucketTuner.Stage.PROBE || t.stage() == BucketTuner.Stage.COARSE) {
            LOG.info("BALANCE tuning {}", sb); // bounded by flexlink.tuning.budget per channel
        } else {
            LOG.debug("BALANCE {}", sb);
        }
    }

    private String describe(double[] s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < aux; i++) {
            sb.append(i == 0 ? "" : ",").append(pathNames.get(i + 1)).append('=')
                    .append(String.format(Locale.ROOT, "%.4f", s[i]));
        }
        return sb.toString();
    }

    /** Current auxiliary shares per channel label, for stats. */
    @Override
    public synchronized Map<String, Map<String, Double>> shareTable() {
        Map<String, Map<String, Double>> out = new LinkedHashMap<>();
        for (int ch = 0; ch < tuners.length; ch++) {
            if (tuners[ch] != null) {
                Map<String, Double> m = new LinkedHashMap<>();
                for (int i = 0; i < aux; i++) {
                    m.put(pathNames.get(i + 1), tuners[ch].shares()[i]);
                }
                out.put(SizeBuckets.label(ch), m);
            }
        }
        return out;
    }

    /** The stage per channel label, for stats. */
    @Override
    public synchronized Map<String, String> stageTable() {
        Map<String, String> out = new LinkedHashMap<>();
        for (int ch = 0; ch < tuners.length; ch++) {
            if (tuners[ch] != null) {
                out.put(SizeBuckets.label(ch), tuners[ch].stage().name());
            }
        }
        return out;
    }

    /** The stage of a channel, or null if it was never used (tests, stats). */
    public synchronized BucketTuner.Stage stage(Collective c, long bytes) {
        BucketTuner t = tuners[SizeBuckets.channel(c, bytes)];
        return t == null ? null : t.stage();
    }

    /** Decisions so far, oldest first. */
    @Override
    public synchronized List<String> history() {
        return new ArrayList<>(history);
    }

    public TuningTable table() {
        return table;
    }
}
