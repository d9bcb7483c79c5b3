package io.flexlink.path;

/**
 * Makes an auxiliary path available to communicators ({@link java.util.ServiceLoader}); flexlink-native
 * registers the NVSHMEM path this way, so the core needs no native code. The PCIe path is built in.
 */
public interface PathProvider {
    /** The path's name in {@code flexlink.paths}. */
    String name();

    /** Null when the path can run for this rank, else one line saying why not (never throws). */
    String unavailableReason(PathContext context);

    /**
     * Sets the path up for one rank. Every rank of the communicator calls this together (after all of them
     * reported the path available), so it may exchange bytes through {@link PathContext#exchange()}.
     */
    Path create(PathContext context);
}
