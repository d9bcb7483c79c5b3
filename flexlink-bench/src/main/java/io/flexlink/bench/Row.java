package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import java.util.Locale;

/** One line of the table: a size, type, operation and root, with its measurements. */
final class Row {
    /** One timed run: out of place, in place, or the baseline's. */
    static final class Run {
        /** Average time of one call, microseconds. */
        final double timeUs;
        /** Algorithm bandwidth, GB/s (10^9 bytes). */
        final double algBw;
        /** Bus bandwidth, GB/s. */
        final double busBw;
        /** Wrong elements, or -1 when not checked. */
        final long wrong;

        Run(double timeUs, double algBw, double busBw, long wrong) {
            this.timeUs = timeUs;
            this.algBw = algBw;
            this.busBw = busBw;
            this.wrong = wrong;
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
        static Basis of(Collective c, int ranks) {
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
    /** The reduction, or null for collectives that do not reduce (printed {@code none}). */
    final ReduceOp op;
    final int root;
    Run outOfPlace;
    Run inPlace;
    /** The primary-only run, or null without --baseline. */
    Run baseline;
    /** Each auxiliary path's share of the elements, in the header's order. */
    double[] shares = new double[0];
    /** What {@link #vs()} compares. */
    Basis basis = Basis.BUSBW;

    Row(long bytes, long count, DataType type, ReduceOp op, int root) {
        this.bytes = bytes;
        this.count = count;
        this.type = type;
        this.op = op;
        this.root = root;
    }

    String opName() {
        return op == null ? "none" : op.ncclName();
    }

    /** FlexLink's out-of-place bandwidth ({@link #basis}) over the baseline's, or NaN without a baseline. */
    double vs() {
        if (baseline == null || !(basis.of(baseline) > 0)) {
            return Double.NaN;
        }
        return basis.of(outOfPlace) / basis.of(baseline);
    }

    long wrong() {
        return Math.max(0, outOfPlace.wrong) + Math.max(0, inPlace == null ? 0 : inPlace.wrong);
    }

    String label() {
        return bytes + " B " + type.ncclName() + " " + opName() + (root >= 0 ? " root " + root : "");
    }
}
