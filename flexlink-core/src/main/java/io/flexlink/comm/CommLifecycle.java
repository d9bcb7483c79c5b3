package io.flexlink.comm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.path.Path;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The states of one communicator and how it leaves them: healthy, failed (an asynchronous error is
 * recorded: every call throws it), aborted (by the application, a lost peer or the watchdog: calls throw
 * INVALID_USAGE, or the error that caused it), finalized (its work drained and its resources freed: only
 * close is left), revoked (its work stopped and its paths freed, its ranks' rendezvous kept: split, shrink
 * and close are left), closed. Finalized and revoked exclude each other, as in NCCL (a revoke is a
 * finalize that does not wait). One lock serializes the calls and every
 * transition, so that nothing frees a path a call is using; it is only held while enqueueing, and a call
 * waiting on the host for its peers gives it up when an abort is requested.
 */
final class CommLifecycle implements io.flexlink.runtime.CaptureUser {
    private static final Logger LOG = LoggerFactory.getLogger(CommLifecycle.class);

    final ReentrantLock lock = new ReentrantLock();
    final CommHealth health;
    final Teardown teardown;
    /** Null when the watchdog is off. */
    final CallWatch watch;
    private final int rank;
    private final int size;
    private final Path primary;
    private final Path[] aux;
    private final long drainNanos;
    private final String name;
    private volatile Watchdog watchdog;
    private volatile boolean closed;
    private volatile boolean aborted;
    private volatile boolean abortRequested;
    private volatile boolean finalized;
    private volatile boolean revoked;

    /** Runs before close() waits for the paths' streams: the enqueue thread hands over everything it has. */
    private final Runnable drainEnqueue;
    /** Runs before anything is freed: the enqueue thread stops and the callers' streams waiting on it move on. */
    private final Runnable stopEnqueue;

    /**
     * @param tellPeers    what else tells the peers of an abort (the balance board's abort word), or null
     * @param drainEnqueue before close() waits for the paths (the enqueue thread drains)
     * @param stopEnqueue  before the paths are freed (the enqueue thread stops)
     */
    CommLifecycle(Backend backend, int rank, int size, int device, Path primary, Path[] aux, Duration timeout,
                  String name, Runnable tellPeers, Runnable drainEnqueue, Runnable stopEnqueue) {
        this.drainEnqueue = drainEnqueue;
        this.stopEnqueue = stopEnqueue;
        this.rank = rank;
        this.size = size;
        this.primary = primary;
        this.aux = aux;
        this.name = name;
        this.health = new CommHealth(rank, size, primary, aux, lock, tellPeers, System::nanoTime);
        this.teardown = new Teardown(rank, size, primary, aux, () -> backend.busyStreams(device));
        this.watch = timeout.isZero() ? null : new CallWatch(backend, device, timeout.toNanos());
        // a stream still busy this long after its counters were released is stuck: close() frees it later
        this.drainNanos = timeout.isZero() ? Teardown.DEFAULT_DRAIN_NANOS
                : Math.min(timeout.toNanos(), Teardown.DEFAULT_DRAIN_NANOS);
    }

    /** Starts watching (when the watchdog is on); the communicator is fully built. */
    void start() {
        if (watch != null) {
            watchdog = Watchdog.SHARED;
            watchdog.register(this);
        }
    }

    /** The watchdog's clock (only with the watchdog on). */
    long now() {
        return watchdog.now();
    }

    boolean aborted() {
        return aborted;
    }

    /** Runs {@code action} under the call lock, unless the communicator's paths are torn down. */
    void unlessTorn(Runnable action) {
        lock.lock();
        try {
            if (!teardown.done()) {
                action.run();
            }
        } finally {
            lock.unlock();
        }
    }

    /** What a graph that captured this communicator's calls asks before each replay. */
    @Override
    public String released() {
        return teardown.done() ? name + " (closed)" : aborted ? name + " (aborted)" : null;
    }

    /** True once an abort was asked for, by anyone: a call waiting on the host for its peers gives up. */
    boolean abortRequested() {
        return abortRequested;
    }

    /** Without the lock, before the arguments are looked at: a closed communicator is a usage error first. */
    void checkNotClosed() {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, "communicator: rank " + rank + " was closed");
        }
    }

    /** Under the lock, before a call: closed, finalized, revoked, broken by an asynchronous error, or aborted. */
    void checkUsable() {
        checkNotClosed();
        if (finalized || revoked) {
            // NCCL refuses a revoked communicator's collectives with ncclInvalidUsage; a finalized one has nothing left
            throw new FlexLinkException(Result.INVALID_USAGE, "communicator: rank " + rank + " was " + (finalized
                    ? "finalized: only close() is allowed" : "revoked: only split, shrink and close() are allowed"));
        }
        FlexLinkException e = health.check();
        if (e != null) {
            throw new FlexLinkException(e.result(), "communicator: rank " + rank + "/" + size + " has an "
                    + "asynchronous error (abort() or close() it and create a new one): " + e.detail(), e);
        }
        if (aborted || abortRequested) {
            throw new FlexLinkException(Result.INVALID_USAGE, "communicator: rank " + rank + " was aborted");
        }
    }

    /** Before a split or a shrink: usable, or revoked (its rendezvous was kept for that). */
    void checkSplittable() {
        lock.lock();
        try {
            if (!revoked || closed) {
                checkUsable();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Null unless revoked; then IN_PROGRESS until every stream left the communicator, SUCCESS after (NCCL's). */
    Result revokedResult() {
        return !revoked ? null : teardown.done() ? Result.SUCCESS : Result.IN_PROGRESS;
    }

    boolean revoked() {
        return revoked;
    }

    boolean finalized() {
        return finalized;
    }

    /** Finalized or revoked: the state only close() leaves. */
    private void refuseSecondEnd(String call) {
        if (finalized || revoked) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, call + ": rank " + rank + " was "
                    + (finalized ? "finalized" : "revoked") + " already; only close() is left");
        }
    }

    /**
     * See {@link io.flexlink.Communicator#finalizeComm()}: marks the communicator finalized, waits for its work
     * as close() does (outside the lock, so that the watchdog can still abort a wait that never ends), then
     * frees everything but the ranks' rendezvous; throws the error that the drain met.
     */
    void finalizeComm(boolean inGroup) {
        lock.lock();
        try {
            checkNotClosed();
            if (inGroup) {
                throw new FlexLinkException(Result.INVALID_USAGE, "finalizeComm: rank " + rank + " is inside a group "
                        + "(FlexLink.groupStart); the group's calls of it would never launch");
            }
            refuseSecondEnd("finalizeComm");
            checkUsable();
            finalized = true;
        } finally {
            lock.unlock();
        }
        drain();
        FlexLinkException failed;
        lock.lock();
        try {
            failed = aborted ? health.error() : health.check();
            if (failed == null && aborted) {
                failed = new FlexLinkException(Result.REMOTE_ERROR, "the communicator was aborted while it drained");
            }
            release(drainNanos, failed != null);
        } finally {
            lock.unlock();
        }
        unwatchIfReleased();
        if (failed != null) {
            throw new FlexLinkException(failed.result(), "finalizeComm: rank " + rank + "'s work failed: "
                    + failed.detail(), failed);
        }
    }

    /**
     * See {@link io.flexlink.Communicator#revoke()}: what an abort does (every path told, so that blocked streams
     * here and at the peers move on; then the paths freed once idle, boundedly) without taking the ranks'
     * rendezvous, which a split or shrink needs and close() releases.
     */
    void revoke() {
        checkNotClosed();
        refuseSecondEnd("revoke");
        abortRequested = true; // a call waiting for its peers gives up the lock
        lock.lock();
        try {
            checkNotClosed();
            refuseSecondEnd("revoke");
            revoked = true;
            LOG.info("rank {}/{}: communicator revoked; stopping its work in flight", rank, size);
            health.tell();
            release(drainNanos, true);
        } finally {
            lock.unlock();
        }
        unwatchIfReleased();
    }

    /**
     * Tells every peer (abort words set, waits released: blocked streams move on), aborts the primary
     * transport, then frees what no stream uses any more, waiting for busy streams at most the watchdog's
     * timeout (10 s without one); what is still busy then is freed by close() or the watchdog once idle.
     */
    void abort() {
        abortRequested = true;
        lock.lock();
        try {
            abortLocked(true);
        } finally {
            lock.unlock();
        }
        unwatchIfReleased();
    }

    private void abortLocked(boolean byApplication) {
        if (!aborted) {
            aborted = true;
            abortRequested = true;
            if (byApplication && health.error() == null) {
                LOG.warn("rank {}/{}: communicator aborted", rank, size);
            }
            health.tell();
        }
        release(drainNanos, true);
    }

    /** Under the lock: frees what it can; from then on nothing polls the paths. */
    private void release(long boundNanos, boolean wasAborted) {
        try {
            stopEnqueue.run();
        } catch (RuntimeException e) {
            LOG.debug("rank {}: stopping the enqueue thread: {}", rank, e.toString());
        }
        health.torn();
        teardown.release(boundNanos, wasAborted);
    }

    /** See {@link FlexCommunicator#close()}. */
    void close() {
        boolean first;
        lock.lock();
        try {
            first = !closed;
            closed = true;
        } finally {
            lock.unlock();
        }
        if (first && !aborted && !revoked && !finalized && health.error() == null) {
            drain();
        }
        lock.lock();
        try {
            release(drainNanos, aborted || health.error() != null);
        } finally {
            lock.unlock();
        }
        unwatchIfReleased();
    }

    /** Waits for the enqueue thread and every path's streams; outside the lock, so that the watchdog can abort it. */
    private void drain() {
        try {
            drainEnqueue.run();
        } catch (RuntimeException e) {
            LOG.debug("rank {}: the enqueue thread failed before close: {}", rank, e.getMessage());
        }
        for (Path p : aux) {
            for (RuntimeStream s : p.streams()) {
                try {
                    s.synchronize();
                } catch (FlexLinkException e) {
                    LOG.debug("rank {}: {} failed before close: {}", rank, p.name(), e.getMessage());
                }
            }
        }
    }

    private void unwatchIfReleased() {
        Watchdog w = watchdog;
        if (w != null && teardown.done()) {
            w.unregister(this);
        }
    }

    // ---- the watchdog ----

    long timeoutNanos() {
        return watch == null ? Long.MAX_VALUE : watch.timeoutNanos();
    }

    /** Moves this communicator to another watchdog (one with a manual clock, or a recorder of its own). */
    void useWatchdog(Watchdog w) {
        if (watch == null) {
            throw new IllegalStateException("the watchdog is off for " + name);
        }
        watchdog.unregister(this);
        watchdog = w;
        w.register(this);
    }

    /**
     * One watchdog round at {@code now}: finish freeing an aborted communicator; else poll its errors and
     * abort it on one (the error was logged and the peers told when it was found); else abort it when a
     * call is overdue, with one WARN line saying which call, paths and ranks it waited on.
     */
    void watchdogCheck(long now) {
        if (!lock.tryLock()) {
            // a thread is inside a call: only its time there can be overdue
            String late = watch.overdueInside(now);
            if (late != null) {
                abortRequested = true; // makes a call waiting for its peers give up the lock
                lock.lock();
                try {
                    if (!aborted) {
                        String why = "watchdog: " + late + "; aborting the communicator";
                        record(now, why);
                        health.fail(new FlexLinkException(Result.REMOTE_ERROR, why));
                    }
                    abortLocked(false);
                } finally {
                    lock.unlock();
                }
            }
            unwatchIfReleased();
            return;
        }
        try {
            if (aborted || revoked) {
                release(0, true);
            } else if (health.poll() != null) {
                // a peer's abort or a failed stream: this rank's record shows where its own calls stood
                record(now, "watchdog: aborting the communicator after its error: " + health.error().detail());
                abortLocked(false);
            } else {
                checkOverdue(now); // also while close() waits for the streams: a stall there counts too
            }
        } finally {
            lock.unlock();
        }
        unwatchIfReleased();
    }

    private void checkOverdue(long now) {
        String late = watch.overdue(now);
        if (late == null) {
            return;
        }
        String why = "watchdog: " + late + "; waiting on " + health.describeStall() + "; aborting the communicator";
        record(now, why);
        health.fail(new FlexLinkException(Result.REMOTE_ERROR, why));
        abortLocked(false);
    }

    /** Under the lock, before the abort changes anything: the flight record, to the log and its file. */
    private void record(long now, String why) {
        try {
            watchdog.recorder().write(rank, size, name, why,
                    watch.flightRecord(now, FlightRecorder.BEFORE, FlightRecorder.AFTER));
        } catch (RuntimeException e) {
            LOG.warn("rank {}/{}: watchdog: no flight record: {}", rank, size, e.toString());
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
