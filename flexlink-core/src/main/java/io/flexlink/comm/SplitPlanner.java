package io.flexlink.comm;

import io.flexlink.path.CollectiveCall;

/**
 * Turns shares into element ranges: the primary path takes {@code [0, lengths[0])}, auxiliary path
 * {@code i} the next {@code lengths[i + 1]} elements. Range boundaries are multiples of 256 bytes so that
 * every path's slice stays aligned for vector loads. Pure arithmetic on values every rank has, so every
 * rank splits identically.
 */
final class SplitPlanner {
    static final int ALIGN_BYTES = 256;

    private final boolean hasPrimary;
    private final long minSplitBytes;

    SplitPlanner(boolean hasPrimary, long minSplitBytes) {
        this.hasPrimary = hasPrimary;
        this.minSplitBytes = minSplitBytes;
    }

    /**
     * Fills {@code lengths} (primary first, then each auxiliary path) for {@code call}.
     *
     * @return true when any auxiliary path carries elements
     */
    boolean plan(CollectiveCall call, int ranks, double[] fractions, long[] lengths) {
        long count = call.count;
        int aux = lengths.length - 1;
        java.util.Arrays.fill(lengths, 0);
        if (hasPrimary && (aux == 0 || call.bytes(ranks) < minSplitBytes)) {
            lengths[0] = count;
            return false;
        }
        long align = Math.max(1, ALIGN_BYTES / call.type.size());
        double sum = 0;
        for (int i = 0; i < aux; i++) {
            sum += fractions[i];
        }
        if (!hasPrimary) {
            // no primary path: the auxiliary paths carry everything, in proportion to their shares
            if (sum <= 0) {
                lengths[1] = count;
                return true;
            }
            long left = count;
            for (int i = 0; i < aux - 1; i++) {
                long len = Math.min(left, (long) Math.floor(count * (fractions[i] / sum) / align) * align);
                lengths[i + 1] = len;
                left -= len;
            }
            lengths[aux] = left;
            return true;
        }
        long left = count;
        boolean any = false;
        for (int i = 0; i < aux; i++) {
            long len = Math.min(left, (long) Math.floor(count * fractions[i] / align) * align);
            lengths[i + 1] = len;
            left -= len;
            any |= len > 0;
        }
        lengths[0] = left;
        return any;
    }
}
