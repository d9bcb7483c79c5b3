package io.flexlink.sync;

/**
 * How large a staged path's chunks must be for the host's enqueueing of them to stay small against their
 * transfer. Whatever its size, a chunk costs the thread that enqueues it about a dozen stream operations per
 * rank (some 25 µs on the H200's host, docs/benchmarks.md), and a thread that drives several ranks (one
 * group over {@code initAll}'s communicators) pays that once for each of them before the last rank's
 * chunk can move. A chunk shorter than that on the link leaves the GPUs waiting for the host, however well
 * the path pipelines. One value per communicator: every rank computes the same chunks from it.
 */
public final class EnqueueBudget {
    /**
     * Bytes a PCIe link (about 50 GB/s each way) moves in 2.5 times one rank's enqueue of a chunk (about
     * 25 µs): a chunk that keeps each of its links busy that long costs the host at most 40 % of its transfer.
     */
    public static final long LINK_BYTES_PER_RANK = 3L << 20;
    /** Every rank enqueued by a thread of its own (one rank per process, or {@code initRank} per thread). */
    public static final EnqueueBudget ONE_RANK_PER_THREAD = new EnqueueBudget(1);

    private final int ranksPerThread;

    /** A budget for {@code ranksPerThread} ranks enqueued one after the other by one thread. */
    public EnqueueBudget(int ranksPerThread) {
        if (ranksPerThread < 1) {
            throw new IllegalArgumentException("ranks per thread: " + ranksPerThread);
        }
        this.ranksPerThread = ranksPerThread;
    }

    public int ranksPerThread() {
        return ranksPerThread;
    }

    /**
     * The smallest chunk worth its enqueue, in bytes, for a chunk each of whose bytes crosses this rank's
     * busiest link direction {@code crossings} times (an AllGather's consumer reads every other rank's chunk:
     * {@code n - 1}; an AllReduce moves contributions and results: {@code 2(n - 1)}); never below
     * {@link ChunkPlan#MIN_CHUNK_BYTES}.
     */
    public long minChunkBytes(long crossings) {
        return Math.max(ChunkPlan.MIN_CHUNK_BYTES, ranksPerThread * LINK_BYTES_PER_RANK / Math.max(1, crossings));
    }

    @Override
    public String toString() {
        return ranksPerThread + " rank(s) per enqueueing thread";
    }
}
