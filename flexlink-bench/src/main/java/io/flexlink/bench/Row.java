package io.flexlink.bench;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;

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

    /** FlexLink's out-of-place busbw over the baseline's, or NaN without a baseline. */
    double vs() {
        if (baseline == null || !(baseline.busBw > 0)) {
            return Double.NaN;
        }
        return outOfPlace.busBw / baseline.busBw;
    }

    long wrong() {
        return Math.max(0, outOfPlace.wrong) + Math.max(0, inPlace == null ? 0 : inPlace.wrong);
    }

    String label() {
        return bytes + " B " + type.ncclName() + " " + opName() + (root >= 0 ? " root " + root : "");
    }
}
