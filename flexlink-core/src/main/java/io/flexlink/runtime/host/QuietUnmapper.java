package io.flexlink.runtime.host;

import io.flexlink.runtime.shm.ShmSegment;
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
 * Unmaps released file-backed shared memory once no stream can still touch it. A communicator that is
 * aborted releases its memory while its streams drain what they had queued (waits released, copies of
 * garbage); unmapping under a running copy would crash the JVM, where freeing malloc'd memory would not.
 * So the unmap waits until every stream of the backend, open or closed but draining, has finished the
 * work it had queued at release time (work queued later cannot use released memory). A stream still
 * blocked after {@link #PATIENCE_NANOS} keeps the mapping until the process exits: a leak, never a crash.
 */
final class QuietUnmapper {
    private static final Logger LOG = LoggerFactory.getLogger(QuietUnmapper.class);
    static final long PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** Mappings given up on: referenced forever so that no GC cleaner unmaps them either. */
    private static final List<ShmSegment> PARKED = new ArrayList<>();

    private final Set<HostStream> open;
    private final Set<HostStream> draining = ConcurrentHashMap.newKeySet();
    private final List<Pending> pending = new ArrayList<>();
    private Thread reaper;

    private static final class Pending {
        final ShmSegment segment;
        final Map<HostStream, Long> marks;
        final long since = System.nanoTime();

        Pending(ShmSegment segment, Map<HostStream, Long> marks) {
            this.segment = segment;
            this.marks = marks;
        }

        boolean quiet() {
            marks.entrySet().removeIf(e -> e.getKey().completedCount() >= e.getValue());
            return marks.isEmpty();
        }
    }

    QuietUnmapper(Set<HostStream> open) {
        this.open = open;
    }

    /** A stream was closed: its worker may still be running queued work. */
    void closed(HostStream s) {
        draining.removeIf(HostStream::isIdle);
        if (!s.isIdle()) {
            draining.add(s);
        }
    }

    /** Unmaps {@code segment} now if every stream is past its queued work, else later. */
    void unmapWhenQuiet(ShmSegment segment) {
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
            segment.close();
            return;
        }
        synchronized (this) {
            pending.add(new Pending(segment, marks));
            if (reaper == null) {
                reaper = new Thread(this::reap, "flexlink-shm-unmap");
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
                        p.segment.close();
                        it.remove();
                    } else if (System.nanoTime() - p.since > PATIENCE_NANOS) {
                        LOG.debug("INIT {} stays mapped: streams still busy {} s after its release",
                                p.segment, TimeUnit.NANOSECONDS.toSeconds(PATIENCE_NANOS));
                        synchronized (PARKED) {
                            PARKED.add(p.segment);
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
