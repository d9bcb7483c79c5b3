package io.flexlink.path;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.sync.ChunkPlan;
import io.flexlink.sync.EnqueueBudget;

/**
 * How the staged algorithms cut a range into chunks: boundaries on 256-byte multiples (vector loads,
 * copy-engine bursts), no chunk larger than what one slot carries, none smaller than its host enqueue is
 * worth ({@link EnqueueBudget}). One per path, reused call after call (the plan is kept when a call repeats
 * the last one's sizes); used under the communicator's lock.
 */
final class StagedChunks {
    private final ChunkPlan plan = new ChunkPlan();
    /** {@code n - 1}: the peers whose pieces a rank's link carries per chunk (1 for a channel of one rank). */
    private final long peers;
    /** Per collective (by ordinal), the smallest chunk worth its enqueue: worked out once, not per call. */
    private final long[] minChunkBytes;

    StagedChunks(EnqueueBudget budget, int ranks) {
        this.peers = Math.max(1, ranks - 1);
        Collective[] all = Collective.values();
        this.minChunkBytes = new long[all.length];
        for (Collective c : all) {
            minChunkBytes[c.ordinal()] = budget.minChunkBytes(crossings(c));
        }
    }

    /** Elements per 256 bytes: the alignment of every chunk and segment boundary. */
    static long align(DataType type) {
        return Math.max(1, 256 / type.size());
    }

    /**
     * How many times each byte of a chunk of {@code c} crosses this rank's busiest link direction, which sets
     * the smallest chunk worth enqueueing: a Broadcast's receiver reads the root's chunk once; an AllReduce or
     * Reduce moves contributions and then results, {@code n - 1} pieces each; every other collective moves
     * {@code n - 1} pieces one way (an AllGather's consumer reads each peer's chunk, a ReduceScatter's owner
     * each peer's contribution, an AlltoAll, Gather or Scatter a block per peer).
     */
    long crossings(Collective c) {
        switch (c) {
            case BROADCAST:
                return 1;
            case ALL_REDUCE:
            case REDUCE:
                return 2 * peers;
            default:
                return peers;
        }
    }

    /** The chunks of {@code length} elements of {@code c}'s {@code type}, each at most {@code maxBytes}. */
    ChunkPlan plan(long length, long maxBytes, DataType type, Collective c) {
        long a = align(type);
        long max = Math.max(a, maxBytes / type.size() / a * a);
        return plan.plan(length, max, a, minChunkBytes[c.ordinal()] / type.size());
    }
}
