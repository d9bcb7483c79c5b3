package io.flexlink.bench;

/**
 * What the timed loop, the warm-up and the checks enqueue: one call of a collective on each local rank
 * of a range, on the {@link Workspace}'s buffers and streams. Three exist: FlexLink's communicators
 * ({@link FlexCalls}), and the baselines, the backend's own collectives called directly ({@link NcclCalls}
 * on CUDA, {@link PrimaryCalls} on the host backend), all three through {@link RankCalls}, which turns a
 * row of {@link PerfCollective} into calls. -G captures whatever a target enqueues ({@link GraphCapture}),
 * so every target runs as a graph alike.
 *
 * <p>This is also the seam for what the core does not have yet: buffer registration (-R) would be a step
 * of the target's creation over the workspace's buffers.
 */
interface CallTarget extends AutoCloseable {
    /** How the header and the JSON name it. */
    String label();

    /** Opens a group that holds several calls per rank (-m); calls launch at {@link #groupEnd()}. */
    void groupStart();

    void groupEnd();

    /**
     * Enqueues {@code call} on local ranks {@code from..to-1} at iteration {@code iter}'s addresses, as one
     * group when there are several ranks (as nccl-tests does when a thread drives several GPUs).
     */
    void enqueue(CallSpec call, int from, int to, int iter);

    /** Stops outstanding work and releases blocked streams (a failure or a timeout). */
    void abort();

    @Override
    void close();
}
