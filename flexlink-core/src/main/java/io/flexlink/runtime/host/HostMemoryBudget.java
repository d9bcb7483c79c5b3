package io.flexlink.runtime.host;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;

/**
 * Refuses a host-backend allocation that the machine cannot hold, before a page of it is touched. Linux
 * overcommits: {@code malloc} of 27 GB succeeds on a 24 GB machine, and the process is killed later,
 * while the memory is zero-filled, with no error to report. So every allocation (of every host backend in
 * the process) is counted, and one that would take the count past what the machine can hold fails with
 * SYSTEM_ERROR, as CUDA's {@code cudaMalloc} does when device memory is short.
 *
 * <p>What the machine can hold is bounded twice, and the lower bound wins: by what was available when
 * nothing was allocated here (later allocations may be untouched, so the available figure does not shrink
 * with them), and by what is available now plus what is allocated here (if all of it is resident, that
 * is exact). A margin of a sixteenth (at most 1 GiB) is kept for the JVM and the system.
 */
final class HostMemoryBudget {
    private static final long MAX_MARGIN = 1L << 30;

    /** The process's budget, on this machine's figures. */
    static final HostMemoryBudget PROCESS = new HostMemoryBudget(HostMemoryProbe.SYSTEM);

    private final HostMemoryProbe probe;
    private long allocated;
    /** Available when {@link #allocated} was last zero; -1 before the first allocation. */
    private long baseline = -1;

    HostMemoryBudget(HostMemoryProbe probe) {
        this.probe = probe;
    }

    /** Counts {@code bytes} allocated, or throws SYSTEM_ERROR (and counts nothing) if they cannot be held. */
    synchronized void reserve(long bytes) {
        long available = probe.availableBytes();
        if (available >= 0) {
            if (allocated == 0 || baseline < 0) {
                baseline = available;
            }
            long holds = Math.min(baseline, available > Long.MAX_VALUE - allocated ? Long.MAX_VALUE
                    : available + allocated);
            long limit = holds - Math.min(MAX_MARGIN, holds / 16);
            if (bytes > limit - allocated) {
                throw new FlexLinkException(Result.SYSTEM_ERROR, "host backend: out of memory: " + bytes
                        + " bytes asked for (" + size(bytes) + ") with " + size(allocated)
                        + " allocated already, but this machine can hold about " + size(holds)
                        + " (" + size(available) + " available now, less a margin of "
                        + size(holds - limit) + "); refused before touching a page, where the kernel "
                        + "would kill the process. Use smaller buffers or fewer ranks");
            }
        }
        allocated += bytes;
    }

    synchronized void release(long bytes) {
        allocated -= bytes;
    }

    synchronized long allocated() {
        return allocated;
    }

    /** A byte count as people read it. */
    private static String size(long b) {
        if (b >= 1L << 30) {
            return String.format("%.1f GiB", b / (double) (1L << 30));
        }
        if (b >= 1L << 20) {
            return String.format("%.1f MiB", b / (double) (1L << 20));
        }
        return b + " B";
    }
}
