package io.flexlink.path;

/**
 * Makes an auxiliary path available to communicators, like one entry of NCCL's table of transports. The
 * PCIe path is built in; flexlink-native registers the NVSHMEM path through {@link java.util.ServiceLoader},
 * so the core needs no native code. {@link PathRegistry} lists them all.
 */
public interface PathProvider {
    /** The path's name in {@code flexlink.paths}. */
    String name();

    /** The most ranks the path serves (the staged algorithms address ranks by 64-bit masks). */
    default int maxRanks() {
        return 64;
    }

    /** Null when the path can run for this rank, else one line saying why not (never throws). */
    String unavailableReason(PathContext context);

    /**
     * Sets the path up for one rank. Every rank of the communicator calls this together (after all of them
     * reported the path available), so it may exchange bytes through {@link PathContext#exchange()}.
     */
    Path create(PathContext context);
}
