package io.flexlink.comm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.path.Path;
import io.flexlink.runtime.RuntimeStream;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The error state of one communicator, NCCL's model: the first asynchronous error is kept and sticks.
 * An error is found by polling, never by waiting: a failed stream of a path or of the caller (the host
 * ring runs there), a peer's abort seen in a staging area's abort word, the primary transport's own
 * error (NCCL's async error). Once found, the peers are told at once: every path is aborted (its abort
 * word set, every counter released), so their waits return and they find the abort word in turn.
 *
 * <p>Everything that touches a path runs under the communicator's call lock, so that it never races
 * with the release of the paths' memory; callers that must not block ({@code getAsyncError}, the
 * watchdog) only try the lock and look again later.
 */
final class CommHealth {
    private static final Logger LOG = LoggerFactory.getLogger(CommHealth.class);
    /**
     * A call's check asks the streams themselves (on CUDA a {@code cudaStreamQuery}) at most this often; the
     * checks in between read only what the streams already know (a rejected launch at once). A fault of finished
     * work may so wait this long for a call to find it; {@code getAsyncError} and the watchdog ask at once. A
     * query costs microseconds on a busy GPU (3.6 to 4.4 µs among eight ranks), so only one stream of each fault
     * domain is asked (on CUDA one per device, not each of the paths' and the caller's; and the CUDA backend asks a
     * device again only once no stream of it answered within a millisecond, so communicators sharing a device share
     * their queries), and one clock read per check instead of one per stream spares a small call tens of
     * nanoseconds.
     */
    static final long POLL_NANOS = 10_000_000;

    private final int rank;
    private final int size;
    private final Path primary;
    private final Path[] aux;
    private final ReentrantLock lock;
    private final AtomicReference<FlexLinkException> error = new AtomicReference<>();
    private volatile RuntimeStream lastStream;
    private boolean primaryTold;
    /** Set (under the lock) once release began: the paths may be gone. */
    private boolean torn;

    /** Every auxiliary path's streams, path by path, and the path each belongs to. */
    private final RuntimeStream[] streams;
    private final Path[] owners;
    /** Every fault domain of those streams, once each, and the index of each stream's domain among them. */
    private final Object[] domains;
    private final int[] domainOf;
    /**
     * Per domain, during one poll (under the lock): whether one of its streams stood for it
     * ({@link RuntimeStream#pollForDomain()}, which may answer from the stream's last due poll). On CUDA one query
     * per device finds what any of its streams would; a stream being captured stands for nothing (a query would
     * invalidate the graph), so the next stream of its domain is asked instead.
     */
    private final boolean[] answered;

    private final Runnable tellPeers;
    private final LongSupplier clock;
    /** When a call's check last asked the streams (the clock's nanoseconds). */
    private long polledAt;

    CommHealth(int rank, int size, Path primary, Path[] aux, ReentrantLock lock, Runnable tellPeers,
               LongSupplier clock) {
        this.tellPeers = tellPeers;
        this.clock = clock;
        this.polledAt = clock.getAsLong() - POLL_NANOS;
        this.rank = rank;
        this.size = size;
        this.primary = primary;
        this.aux = aux;
        this.lock = lock;
        int n = 0;
        for (Path p : aux) {
            n += p.streams().length;
        }
        this.streams = new RuntimeStream[n];
        this.owners = new Path[n];
        this.domainOf = new int[n];
        Object[] found = new Object[n];
        int distinct = 0;
        int i = 0;
        for (Path p : aux) {
            for (RuntimeStream s : p.streams()) {
                streams[i] = s;
                owners[i] = p;
                Object d = s.faultDomain();
                int k = indexOf(found, distinct, d);
                if (k < 0) {
                    k = distinct;
                    found[distinct++] = d;
                }
                domainOf[i++] = k;
            }
        }
        this.domains = Arrays.copyOf(found, distinct);
        this.answered = new boolean[distinct];
    }

    private static int indexOf(Object[] domains, int count, Object domain) {
        for (int k = 0; k < count; k++) {
            if (Objects.equals(domains[k], domain)) {
                return k;
            }
        }
        return -1;
    }

    /** The first asynchronous error, or null; never blocks. */
    FlexLinkException error() {
        return error.get();
    }

    /** Remembers the caller's stream of the latest call (its failures are this communicator's too). */
    void used(RuntimeStream stream) {
        lastStream = stream;
    }

    /** Under the lock: from now on nothing touches the paths. */
    void torn() {
        torn = true;
    }

    /**
     * Under the lock, for every call: the recorded error, else a peer's abort read from the abort words (a
     * memory read per path), else a failed stream of a path or of the caller: the failures the streams know,
     * and at most every {@link #POLL_NANOS} what they find when asked (on CUDA a {@code cudaStreamQuery}).
     * NCCL's own error is left to NCCL, whose next call returns it.
     */
    FlexLinkException check() {
        FlexLinkException e = error.get();
        if (e != null || torn) {
            return e;
        }
        for (Path p : aux) {
            FlexLinkException a = p.asyncError();
            if (a != null) {
                return fail(a);
            }
        }
        long now = clock.getAsLong();
        boolean ask = now - polledAt >= POLL_NANOS;
        if (ask) {
            polledAt = now;
        }
        FlexLinkException f = streamFailure(ask);
        return f == null ? null : fail(f);
    }

    /** Polls everything that can fail, if the lock is free now; the first error found, or null. Never blocks. */
    FlexLinkException poll() {
        FlexLinkException e = error.get();
        if (e == null && lock.tryLock()) {
            try {
                e = torn ? error.get() : detect();
                if (e != null) {
                    e = fail(e);
                }
            } finally {
                lock.unlock();
            }
        }
        return e;
    }

    private FlexLinkException detect() {
        for (Path p : aux) {
            FlexLinkException a = p.asyncError();
            if (a != null) {
                return a;
            }
        }
        if (primary != null && !primaryTold) {
            FlexLinkException a = primary.asyncError();
            if (a != null) {
                return a;
            }
        }
        return streamFailure(true);
    }

    /**
     * The first failed stream's failure: asked of one stream per fault domain ({@code ask}), or only what each
     * already knows.
     */
    private FlexLinkException streamFailure(boolean ask) {
        if (ask) {
            Arrays.fill(answered, false);
        }
        for (int i = 0; i < streams.length; i++) {
            RuntimeStream s = streams[i];
            if (ask && !answered[domainOf[i]] && s.pollForDomain()) {
                answered[domainOf[i]] = true;
            }
            FlexLinkException f = s.knownFailure();
            if (f != null) {
                return new FlexLinkException(f.result(), owners[i].name() + " stream " + s.label() + " failed: "
                        + f.detail(), f);
            }
        }
        RuntimeStream s = lastStream;
        if (s == null) {
            return null;
        }
        if (ask && !answeredFor(s)) {
            s.pollForDomain();
        }
        FlexLinkException f = s.knownFailure();
        return f == null ? null : new FlexLinkException(f.result(), "the caller's stream " + s.label()
                + " failed: " + f.detail(), f);
    }

    /** Whether a stream of {@code s}'s fault domain stood for it in this poll. */
    private boolean answeredFor(RuntimeStream s) {
        int k = indexOf(domains, domains.length, s.faultDomain());
        return k >= 0 && answered[k];
    }

    /**
     * Under the lock: records {@code e} unless an error was recorded first (the first one is returned),
     * logs it in one WARN line and tells the peers.
     */
    FlexLinkException fail(FlexLinkException e) {
        if (!error.compareAndSet(null, e)) {
            return error.get();
        }
        LOG.warn("rank {}/{}: {}: {}; telling the other ranks", rank, size, e.result(), e.detail());
        tell();
        return e;
    }

    /** Under the lock: aborts every path (abort words set, counters released) so that no peer stays blocked. */
    void tell() {
        if (torn) {
            return;
        }
        if (tellPeers != null) {
            try {
                tellPeers.run();
            } catch (RuntimeException e) {
                LOG.debug("rank {}: telling the peers: {}", rank, e.toString());
            }
        }
        for (Path p : aux) {
            try {
                p.abort();
            } catch (RuntimeException e) {
                LOG.debug("rank {}: aborting {}: {}", rank, p.name(), e.toString());
            }
        }
        if (primary != null && !primaryTold) {
            primaryTold = true;
            try {
                primary.abort();
            } catch (RuntimeException e) {
                LOG.debug("rank {}: aborting {}: {}", rank, primary.name(), e.toString());
            }
        }
    }

    /** Under the lock: which paths still have work, and what their counters say (the watchdog's report). */
    String describeStall() {
        StringBuilder sb = new StringBuilder();
        for (Path p : torn ? new Path[0] : aux) {
            boolean busy = false;
            for (RuntimeStream s : p.streams()) {
                busy |= !s.isIdle();
            }
            if (busy) {
                String d = p.describeStall();
                sb.append(sb.length() == 0 ? "" : ", ").append(p.name()).append(" (")
                        .append(d == null ? "streams busy" : d).append(')');
            }
        }
        if (primary != null && !torn && !primaryTold) {
            String d = primary.describeStall();
            if (d != null || sb.length() == 0) {
                sb.append(sb.length() == 0 ? "" : ", ").append(primary.name()).append(d == null ? "" : " (" + d + ")");
            }
        }
        return sb.length() == 0 ? "nothing visible (the caller's stream is busy)" : sb.toString();
    }

    /** The result to report: the recorded error's, else REMOTE_ERROR once aborted, else SUCCESS. */
    static Result result(FlexLinkException e, boolean aborted) {
        return e != null ? e.result() : aborted ? Result.REMOTE_ERROR : Result.SUCCESS;
    }
}
