package io.flexlink.nvshmem;

import io.flexlink.path.Path;
import io.flexlink.path.PathContext;
import io.flexlink.path.PathProvider;

/**
 * Offers the {@code nvshmem} path to communicators ({@code flexlink.paths=...,nvshmem}; registered in
 * {@code META-INF/services/io.flexlink.path.PathProvider}). The path runs on the CUDA backend where
 * NVSHMEM 3.x opens ({@code flexlink.nvshmem.library}) and each process holds one rank of the
 * communicator; elsewhere it reports why not, in one line, and the other paths carry every collective.
 */
public final class NvshmemPathProvider implements PathProvider {
    @Override
    public String name() {
        return "nvshmem";
    }

    /** Checks what a rank can check alone; whether the ranks are separate processes is agreed in {@link #create}. */
    @Override
    public String unavailableReason(PathContext context) {
        try {
            if (!"cuda".equals(context.backend().name())) {
                return "NVSHMEM needs the cuda backend, this communicator runs on the " + context.backend().name()
                        + " backend";
            }
            if (context.size() > 64) {
                return "more than 64 ranks";
            }
            if (context.size() > 1 && !context.exchange().crossProcess()) {
                return "the " + context.size() + " ranks share one process; NVSHMEM needs one PE per process"
                        + " (one rank per process)";
            }
            String reason = NvshmemLibrary.open(context.config().nvshmemLibrary());
            if (reason != null) {
                return reason;
            }
            return NvshmemSession.broken();
        } catch (RuntimeException | LinkageError e) {
            return "probing NVSHMEM failed: " + e;
        }
    }

    /**
     * Sets the path up with every other rank; null when the ranks agree it cannot run here (a process
     * holding several ranks, NVSHMEM failing to initialize or allocate), which rank 0 logs at INFO.
     */
    @Override
    public Path create(PathContext context) {
        return NvshmemSetup.create(context);
    }
}
