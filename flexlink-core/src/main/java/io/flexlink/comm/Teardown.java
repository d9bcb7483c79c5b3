package io.flexlink.comm;

import io.flexlink.path.Path;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frees a communicator's resources without hanging and without freeing memory a stream still uses.
 * A path is freed once its streams are idle; after an abort the wait for that is bounded (the
 * watchdog's timeout, or 10 s without one), and while waiting the path is aborted again every
 * millisecond, because a late counter write of a stream released by {@code releaseAll} can lower a
 * counter that another stream (of a peer process, maybe) then waits on. Once the streams are idle the
 * path is aborted one last time: a write that landed after the last of those kicks is released too, and
 * none of this rank's streams can write again. A path whose streams are still busy at the bound (a GPU
 * kernel that never returns, or a test hook holding a host stream) is not freed: a later
 * {@link #release} (close(), or the watchdog's next round) frees it once it is idle. Freeing its
 * staging memory under a running copy would crash the process; waiting for it could hang forever.
 * Used under the communicator's lock.
 */
final class Teardown {
    private static final Logger LOG = LoggerFactory.getLogger(Teardown.class);
    /** How long an abort waits for the streams without a watchdog timeout. */
    static final long DEFAULT_DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long KICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final int rank;
    private final int size;
    private final Path primary;
    private final Path[] aux;
    private final boolean[] freed;
    private final List<AutoCloseable> rest = new ArrayList<>();
    private boolean warned;
    private volatile boolean done;

    Teardown(int rank, int size, Path primary, Path[] aux) {
        this.rank = rank;
        this.size = size;
        this.primary = primary;
        this.aux = aux;
        this.freed = new boolean[aux.length];
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
     * ({@code aborted}: aborting them again meanwhile). True once everything is freed; idempotent.
     */
    boolean release(long boundNanos, boolean aborted) {
        if (done) {
            return true;
        }
        long deadline = System.nanoTime() + boundNanos;
        List<String> busy = null;
        for (int i = 0; i < aux.length; i++) {
            if (freed[i]) {
                continue;
            }
            if (idle(aux[i], deadline, aborted)) {
                close(aux[i]);
                freed[i] = true;
            } else {
                busy = busy == null ? new ArrayList<>() : busy;
                busy.add(aux[i].name());
            }
        }
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

    private boolean idle(Path p, long deadline, boolean aborted) {
        long kicked = System.nanoTime();
        while (true) {
            boolean idle = true;
            for (RuntimeStream s : p.streams()) {
                idle &= s.isIdle();
            }
            if (idle) {
                if (aborted) {
                    p.abort(); // the last release: no stream of this rank can lower a counter after it
                }
                return true;
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                return false;
            }
            if (aborted && now - kicked >= KICK_NANOS) {
                p.abort();
                kicked = now;
            }
            LockSupport.parkNanos(Math.min(100_000, deadline - now));
        }
    }

    private void close(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("rank {}: releasing {}: {}", rank, c, e.toString());
        }
    }
}
