package io.flexlink.plan;

import io.flexlink.path.CollectiveCall;

/**
 * Turns shares into element ranges: the primary path takes {@code [0, lengths[0])}, auxiliary path
 * {@code i} the next {@code lengths[i + 1]} elements. Range boundaries are multiples of 256 bytes so that
 * every path's slice stays aligned for vector loads. Pure arithmetic on values every rank has, so every
 * rank splits identically.
 */
public final class SplitPlanner {
    public static final int ALIGN_BYTES = 256;

    private final boolean hasPrimary;
    private final long minSplitBytes;
    private final int ranks;

    public SplitPlanner(boolean hasPrimary, long minSplitBytes, int ranks) {
        this.hasPrimary = hasPrimary;
        this.minSplitBytes = minSplitBytes;
        this.ranks = ranks;
    }

    /** True when a call of {@code bytes} runs whole on the primary path whatever the shares. */
    public boolean primaryOnly(long bytes) {
        return hasPrimary && bytes < minSplitBytes;
    }

    /** Fills {@code plan.lengths} and {@code plan.split} from {@code plan.fractions}. */
    public void plan(CallPlan plan) {
        CollectiveCall call = plan.call;
        long[] lengths = plan.lengths;
        double[] fractions = plan.fractions;
        long count = call.count;
        int aux = lengths.length - 1;
        java.util.Arrays.fill(lengths, 0);
        plan.split = false;
        if (hasPrimary && (aux == 0 || call.bytes(ranks) < minSplitBytes)) {
            lengths[0] = count;
            return;
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
                plan.split = true;
                return;
            }
            long left = count;
            for (int i = 0; i < aux - 1; i++) {
                long len = Math.min(left, (long) Math.floor(count * (fractions[i] / sum) / align) * align);
                lengths[i + 1] = len;
                left -= len;
            }
            lengths[aux] = left;
            plan.split = true;
            return;
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
        plan.split = any;
    }
}
