package io.flexlink.path;

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
    private final EnqueueBudget budget;
    /** {@code n - 1}: the peers whose pieces a rank's link carries per chunk (1 for a channel of one rank). */
    private final long peers;

    StagedChunks(EnqueueBudget budget, int ranks) {
        this.budget = budget;
        this.peers = Math.max(1, ranks - 1);
    }

    /** Elements per 256 bytes: the alignment of every chunk and segment boundary. */
    static long align(DataType type) {
        return Math.max(1, 256 / type.size());
    }

    /** The other ranks, as a count of link crossings per chunk byte. */
    long peers() {
        return peers;
    }

    /**
     * The chunks of {@code length} elements of {@code type}, each at most {@code maxBytes}, when every byte of
     * a chunk crosses this rank's busiest link direction {@code crossings} times (a consumer of an AllGather
     * reads each of its {@code n - 1} peers' chunks; an AllReduce moves contributions and results,
     * {@code 2(n - 1)}), which sets the smallest chunk worth enqueueing.
     */
    ChunkPlan plan(long length, long maxBytes, DataType type, long crossings) {
        long a = align(type);
        long max = Math.max(a, maxBytes / type.size() / a * a);
        return plan.plan(length, max, a, budget.minChunkBytes(crossings) / type.size());
    }
}
