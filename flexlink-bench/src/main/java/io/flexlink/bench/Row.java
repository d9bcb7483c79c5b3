package io.flexlink.bench;

import io.flexlink.DataType;
import java.util.Locale;

/** One line of the table: a size, type, operation and root, with its measurements. */
final class Row {
    /** One timed run: out of place, in place, or a baseline's. */
    static final class Run {
        /** Time of one call, microseconds (the threads' and processes' times combined by -a). */
        final double timeUs;
        /** Algorithm bandwidth, GB/s (10^9 bytes). */
        final double algBw;
        /** Bus bandwidth, GB/s. */
        final double busBw;
        /** Wrong elements, or -1 when not checked. */
        final long wrong;
        /** -I's per-iteration statistics, or null. */
        final IterStats iterations;
        /** {@link #timeUs} is the host's time of enqueueing one call (-C 1: nccl-tests' cputime), not the wall time's. */
        final boolean cpuTime;

        Run(double timeUs, double algBw, double busBw, long wrong) {
            this(timeUs, algBw, busBw, wrong, null);
        }

        Run(double timeUs, double algBw, double busBw, long wrong, IterStats iterations) {
            this(timeUs, algBw, busBw, wrong, iterations, false);
        }

        Run(double timeUs, double algBw, double busBw, long wrong, IterStats iterations, boolean cpuTime) {
            this.timeUs = timeUs;
            this.algBw = algBw;
            this.busBw = busBw;
            this.wrong = wrong;
            this.iterations = iterations;
            this.cpuTime = cpuTime;
        }
    }

    /**
     * The bandwidth that {@code vs}, the gate and the plot compare: busbw, or algbw where busbw is 0 for
     * every run (AllReduce, AllGather and ReduceScatter on one rank, whose bus factor is 0). Both runs of a
     * row move the same bytes, so the algbw ratio is the inverse ratio of their times.
     */
    enum Basis {
        BUSBW, ALGBW;

        /** The basis of a sweep of {@code c} over {@code ranks} ranks. */
        static Basis of(PerfCollective c, int ranks) {
            return c.busFactor(ranks) > 0 ? BUSBW : ALGBW;
        }

        /** {@code busbw} or {@code algbw}, as the table's columns are named. */
        String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Basis parse(String label) {
            return label == null ? BUSBW : valueOf(label.toUpperCase(Locale.ROOT));
        }

        double of(Run run) {
            return this == BUSBW ? run.busBw : run.algBw;
        }
    }

    final long bytes;
    final long count;
    final DataType type;
    /** The reduction, or null for collectives that print none (printed {@link #noOpName}). */
    final PerfOp op;
    /** The redop column without an operation: nccl-tests' {@code none}, or hypercube's empty name. */
    String noOpName = "none";
    final int root;
    Run outOfPlace;
    Run inPlace;
    /** The backend's own collectives called directly (NCCL, or the host ring), or null without --baseline. */
    Run baseline;
    /** FlexLink with its primary path alone, or null without --baseline. */
    Run primaryOnly;
    /** Each auxiliary path's share of the elements, in the header's order. */
    double[] shares = new double[0];
    /** What {@link #vs()} compares. */
    Basis basis = Basis.BUSBW;
    /** Which -N cycle measured it (0 for the first). */
    int cycle;

    Row(long bytes, long count, DataType type, PerfOp op, int root) {
        this.bytes = bytes;
        this.count = count;
        this.type = type;
        this.op = op;
        this.root = root;
    }

    String opName() {
        return op == null ? noOpName : op.ncclName();
    }

    /** FlexLink's out-of-place bandwidth ({@link #basis}) over the baseline's, or NaN without a baseline. */
    double vs() {
        return ratio(outOfPlace);
    }

    /** The primary-only FlexLink run over the baseline: what FlexLink's engine costs when it does not split. */
    double primaryVs() {
        return primaryOnly == null ? Double.NaN : ratio(primaryOnly);
    }

    private double ratio(Run run) {
        if (baseline == null || !(basis.of(baseline) > 0)) {
            return Double.NaN;
        }
        return basis.of(run) / basis.of(baseline);
    }

    long wrong() {
        return Math.max(0, outOfPlace.wrong) + Math.max(0, inPlace == null ? 0 : inPlace.wrong);
    }

    String label() {
        return bytes + " B " + type.ncclName() + " " + opName() + (root >= 0 ? " root " + root : "");
    }
}
