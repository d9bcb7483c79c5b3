package io.flexlink.comm;

import io.flexlink.launch.Groups;
import io.flexlink.path.Path;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frees a communicator's resources without hanging and without freeing memory a stream still uses.
 * A path is freed once its streams are idle. After an abort the wait for that is bounded (the
 * watchdog's timeout, or 10 s without one), and while waiting the paths are aborted again every
 * millisecond, because a late counter write of a stream released by {@code releaseAll} can lower a
 * counter that another stream (of a peer process, maybe) then waits on. After an abort the streams of the
 * device that were busy when the teardown began ({@link io.flexlink.runtime.Backend#busyStreams}) must have run
 * too, and every call held until its group's end is let go ({@link Groups#letEveryHeldCallGo}): CUDA's frees wait
 * for the whole device, and where ranks of this process share a GPU a peer's stream can wait for a word its own
 * later write lowered after this rank's last release, or for a group's gate that a thread blocked behind this one
 * would write; such a free would never return. Once all that ran, the paths are aborted one last time (a write
 * that landed after the last kick is released too, and none of this rank's streams can write again) and freed
 * together. What is still busy at the bound (a GPU kernel that never returns, a test hook holding a host stream)
 * is not freed: a later {@link #release} (close(), or the watchdog's next round) frees it once it is idle.
 * Freeing staging memory under a running copy would crash the process; waiting for it could hang forever.
 * Used under the communicator's lock.
 */
final class Teardown {
    private static final Logger LOG = LoggerFactory.getLogger(Teardown.class);
    /** How long an abort waits for the streams without a watchdog timeout. */
    static final long DEFAULT_DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long KICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final int rank;
    private final int size;
    private final Path primary;
    private final Path[] aux;
    private final boolean[] freed;
    /** The device's streams with work left to run, as the backend sees them now. */
    private final Supplier<List<RuntimeStream>> deviceBusy;
    /** After an abort: the device's streams busy when it began and not yet seen idle since (null before). */
    private Set<RuntimeStream> devicePending;
    private final List<AutoCloseable> rest = new ArrayList<>();
    private boolean warned;
    private volatile boolean done;

    Teardown(int rank, int size, Path primary, Path[] aux, Supplier<List<RuntimeStream>> deviceBusy) {
        this.rank = rank;
        this.size = size;
        this.primary = primary;
        this.aux = aux;
        this.freed = new boolean[aux.length];
        this.deviceBusy = deviceBusy;
    }

    /** Something freed after every path (events, the balancer's board, the rendezvous); in order. */
    void then(AutoCloseable c) {
        if (c != null) {
            rest.add(c);
        }
    }

    boolean done() {
        return done;
    }

    /**
     * Frees what no stream can touch any more, waiting up to {@code boundNanos} for busy paths
     * ({@code aborted}: aborting them again meanwhile, and waiting for the device too). True once everything is
     * freed; idempotent.
     */
    boolean release(long boundNanos, boolean aborted) {
        if (done) {
            return true;
        }
        long deadline = System.nanoTime() + boundNanos;
        List<String> busy = aborted ? releaseAborted(deadline) : releaseDrained(deadline);
        if (primary != null) {
            close(primary); // idempotent; the host ring frees only once its calls left the callers' streams
        }
        if (busy != null) {
            if (!warned) {
                warned = true;
                LOG.warn("rank {}/{}: streams of {} still busy {} ms after the abort; their memory stays allocated "
                        + "until they finish (close() or the watchdog frees it then)", rank, size, busy,
                        boundNanos / 1_000_000);
            }
            return false;
        }
        for (AutoCloseable c : rest) {
            close(c);
        }
        done = true;
        return true;
    }

    /** After a drain (nothing failed): each path freed once its own streams are idle; the names of those that are not. */
    private List<String> releaseDrained(long deadline) {
        List<String> busy = null;
        for (int i = 0; i < aux.length; i++) {
            if (freed[i]) {
                continue;
            }
            while (!idle(aux[i]) && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(POLL_NANOS);
            }
            if (idle(aux[i])) {
                close(aux[i]);
                freed[i] = true;
            } else {
                busy = busy == null ? new ArrayList<>() : busy;
                busy.add(aux[i].name());
            }
        }
        return busy;
    }

    /**
     * After an abort or a failure: the paths are freed together once their streams and the device's streams that
     * were busy at the first such release have run, kicked meanwhile; null then, else what is still busy.
     */
    private List<String> releaseAborted(long deadline) {
        if (devicePending == null) {
            devicePending = Collections.newSetFromMap(new IdentityHashMap<>());
            devicePending.addAll(deviceBusy.get());
        }
        long kicked = System.nanoTime();
        kick();
        while (true) {
            List<String> busy = null;
            for (int i = 0; i < aux.length; i++) {
                if (!freed[i] && !idle(aux[i])) {
                    busy = busy == null ? new ArrayList<>() : busy;
                    busy.add(aux[i].name());
                }
            }
            if (!devicePending.isEmpty()) {
                devicePending.retainAll(deviceBusy.get());
            }
            if (busy == null && !devicePending.isEmpty()) {
                busy = List.of(devicePending.size() + " other stream(s) of the device");
            }
            if (busy == null) {
                for (int i = 0; i < aux.length; i++) {
                    if (!freed[i]) {
                        aux[i].abort(); // the last release: no stream of this rank can lower a counter after it
                        close(aux[i]);
                        freed[i] = true;
                    }
                }
                return null;
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                return busy;
            }
            if (now - kicked >= KICK_NANOS) {
                kick();
                kicked = now;
            }
            LockSupport.parkNanos(Math.min(POLL_NANOS, deadline - now));
        }
    }

    /** Releases every wait of the paths not yet freed, and every call held until its group's end. */
    private void kick() {
        Groups.letEveryHeldCallGo();
        for (int i = 0; i < aux.length; i++) {
            if (!freed[i]) {
                aux[i].abort();
            }
        }
    }

    private static boolean idle(Path p) {
        boolean idle = true;
        for (RuntimeStream s : p.streams()) {
            idle &= s.isIdle();
        }
        return idle;
    }

    private void close(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("rank {}: releasing {}: {}", rank, c, e.toString());
        }
    }
}
