package io.flexlink.runtime.host;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frees released memory (malloc'd device and pinned memory, file-backed shared memory) once no stream can
 * still touch it. An application may free a buffer that work it enqueued still uses, and an aborted
 * communicator releases its memory while its streams drain what they had queued (waits released, copies
 * of garbage); freeing or unmapping under a running copy would crash the JVM (large allocations are
 * mappings of their own, returned to the system on free). So the release waits until every stream of the
 * backend, open or closed but draining, has finished the work it had queued at release time: work queued
 * later cannot use the memory, because the memory left {@link LiveRanges} at release and every stream
 * operation is checked against it. It is what CUDA's {@code cudaFree} does by synchronizing the device,
 * without blocking the caller. A stream still blocked after {@link #PATIENCE_NANOS} keeps the memory until
 * the process exits: a leak, never a crash.
 */
final class QuietRelease {
    private static final Logger LOG = LoggerFactory.getLogger(QuietRelease.class);
    static final long PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** Memory given up on: referenced forever so that no GC cleaner unmaps a mapping either. */
    private static final List<Object> PARKED = new ArrayList<>();

    private final Set<HostStream> open;
    private final Set<HostStream> draining = ConcurrentHashMap.newKeySet();
    private final List<Pending> pending = new ArrayList<>();
    private Thread reaper;

    private static final class Pending {
        final Object memory;
        final Runnable release;
        final Map<HostStream, Long> marks;
        final long since = System.nanoTime();

        Pending(Object memory, Runnable release, Map<HostStream, Long> marks) {
            this.memory = memory;
            this.release = release;
            this.marks = marks;
        }

        boolean quiet() {
            marks.entrySet().removeIf(e -> e.getKey().completedCount() >= e.getValue());
            return marks.isEmpty();
        }
    }

    QuietRelease(Set<HostStream> open) {
        this.open = open;
    }

    /** A stream was closed: its worker may still be running queued work. */
    void closed(HostStream s) {
        draining.removeIf(HostStream::isIdle);
        if (!s.isIdle()) {
            draining.add(s);
        }
    }

    /**
     * Runs {@code release} of {@code memory} (named in a log line if it is given up on) now if every stream
     * is past its queued work, else once they are.
     */
    void releaseWhenQuiet(Object memory, Runnable release) {
        draining.removeIf(HostStream::isIdle);
        Map<HostStream, Long> marks = new HashMap<>();
        for (Set<HostStream> set : List.of(open, draining)) {
            for (HostStream s : set) {
                long queued = s.enqueuedCount();
                if (s.completedCount() < queued) {
                    marks.put(s, queued);
                }
            }
        }
        if (marks.isEmpty()) {
            release.run();
            return;
        }
        synchronized (this) {
            pending.add(new Pending(memory, release, marks));
            if (reaper == null) {
                reaper = new Thread(this::reap, "flexlink-host-free");
                reaper.setDaemon(true);
                reaper.start();
            }
        }
    }

    private void reap() {
        while (true) {
            synchronized (this) {
                for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
                    Pending p = it.next();
                    if (p.quiet()) {
                        p.release.run();
                        it.remove();
                    } else if (System.nanoTime() - p.since > PATIENCE_NANOS) {
                        LOG.debug("INIT {} is kept: streams still busy {} s after its release",
                                p.memory, TimeUnit.NANOSECONDS.toSeconds(PATIENCE_NANOS));
                        synchronized (PARKED) {
                            PARKED.add(p.memory);
                        }
                        it.remove();
                    }
                }
                if (pending.isEmpty()) {
                    reaper = null;
                    return;
                }
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }
}
