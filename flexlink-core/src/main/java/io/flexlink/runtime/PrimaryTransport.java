package io.flexlink.runtime;

/** Creates the primary path's communicators: NCCL on CUDA, a ring through host memory on the host backend. */
public interface PrimaryTransport {
    /** Human-readable name and version, e.g. {@code NCCL 2.28.3}. */
    String describe();

    /** Whether this transport accepts several ranks on one device (NCCL does not). */
    boolean allowsSharedDevices();

    /**
     * Creates one rank's primary communicator. {@code exchange} lets the ranks share setup bytes
     * (NCCL's unique id, staging names); every rank of the communicator calls this together.
     */
    PrimaryComm create(RankExchange exchange, int rank, int size, int device);

    /**
     * Creates the primary communicators of several ranks driven by one thread (like
     * {@code ncclCommInitAll}); element {@code i} is rank {@code i}.
     */
    PrimaryComm[] createAll(int[] devices);

    /** Starts a group: calls on this transport's communicators launch together at {@link #groupEnd()}. */
    void groupStart();

    /** Ends a group started by {@link #groupStart()}, launching its calls. */
    void groupEnd();
}
