package io.flexlink.bench;

/**
 * What the timed loop, the warm-up and the checks enqueue: one call of a collective on each local rank
 * of a range, on the {@link Workspace}'s buffers and streams. Three exist: FlexLink's communicators
 * ({@link FlexCalls}), and the baselines, the backend's own collectives called directly ({@link NcclCalls}
 * on CUDA, {@link PrimaryCalls} on the host backend), all three through {@link RankCalls}, which turns a
 * row of {@link PerfCollective} into calls. -G captures whatever a target enqueues ({@link GraphCapture}),
 * so every target runs as a graph alike.
 *
 * <p>-R 1 registers the workspace's buffers with every target after its creation ({@link LocalRegistration},
 * through {@link #registerBuffer}); -R 2 (symmetric windows) would be a step there too, once the workspace
 * allocates with NCCL's allocator.
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

    /**
     * -R 1: registers {@code bytes} at {@code address}, a buffer of local rank {@code r}, with that rank's
     * communicator (ncclCommRegister, or FlexLink's {@code Communicator.register}); returns what deregisters it
     * (a no-op once the target was aborted or closed: NCCL frees registrations with its communicators), or null
     * where the target has no registration (the host ring).
     */
    AutoCloseable registerBuffer(int r, long address, long bytes);

    /** Stops outstanding work and releases blocked streams (a failure or a timeout). */
    void abort();

    @Override
    void close();
}
