package io.flexlink.bench;

import java.util.Arrays;

/**
 * How --baseline's raw NCCL communicators are made on CUDA, decided before any NCCL call so that it can
 * be checked without a GPU: which job ranks this process opens ({@link NcclCalls#initAll} for the ranks of
 * one process, {@link NcclCalls#initRank} for the one rank of a --from-env process), and with
 * NCCL_TESTS_SPLIT each one's ncclCommSplit color and key, taken from the {@link RankLayout} that FlexLink's
 * own split ({@link SplitComms}) uses, so that both sides form the same sub-communicators with the same
 * ranks in them.
 */
final class RawNcclPlan {
    /** Why there is no raw NCCL baseline here, or null when there is one. */
    final String refusal;
    /** The job rank of each local communicator, in local order. */
    final int[] ranks;
    /** Per local communicator: ncclCommSplit's color and key; both null without a split. */
    final int[] colors;
    final int[] keys;

    private RawNcclPlan(String refusal, int[] ranks, int[] colors, int[] keys) {
        this.refusal = refusal;
        this.ranks = ranks;
        this.colors = colors;
        this.keys = keys;
    }

    /**
     * The plan for local {@code devices} (one per local rank, the first being job rank {@code firstRank}).
     * {@code fromEnv}: one rank per process, whose parent communicator spans the job through
     * ncclCommInitRank.
     */
    static RawNcclPlan of(RankLayout layout, int[] devices, int firstRank, boolean fromEnv) {
        if (!fromEnv && Arrays.stream(devices).distinct().count() != devices.length) {
            // ncclCommInitAll's parent would hold two ranks on one GPU, which NCCL refuses; a split after
            // it cannot help, since the parent has to exist first
            return new RawNcclPlan("NCCL refuses several ranks on one GPU: no raw NCCL baseline", new int[0], null,
                    null);
        }
        int[] ranks = new int[devices.length];
        for (int i = 0; i < ranks.length; i++) {
            ranks[i] = firstRank + i;
        }
        if (layout.split == null) {
            return new RawNcclPlan(null, ranks, null, null);
        }
        int[] colors = new int[ranks.length];
        int[] keys = new int[ranks.length];
        for (int i = 0; i < ranks.length; i++) {
            colors[i] = layout.color(ranks[i]);
            keys[i] = layout.splitKey(ranks[i]);
        }
        return new RawNcclPlan(null, ranks, colors, keys);
    }
}
