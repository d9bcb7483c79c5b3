package io.flexlink.launch;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The communicator's enqueue thread: it enqueues the auxiliary paths' part of split calls while the thread
 * that makes the call (one thread may drive every GPU of a machine) goes on with the primary collective and
 * with the other ranks' calls, so that the ranks' auxiliary enqueueing runs in parallel.
 *
 * <p>A call is handed over in the plan stage, right after its fork is recorded on the caller's stream, and
 * joined in the join stage: the caller waits (on the host) until the thread has enqueued it, then makes its
 * stream wait for the events the thread recorded at the end of each path's work. So the caller's stream
 * only ever waits for work enqueued before the wait, as without the thread. (An earlier design let the
 * caller return before the thread had enqueued, its stream waiting on a memory word the paths set later;
 * with eight ranks' streams on one GPU sharing its hardware queues, a caller's wait could sit in front of the
 * very work it waited for, and a run deadlocked.)
 *
 * <p>Calls are handed over in order through a ring of plans, copied (no allocation), each with its own fork
 * and end events; the thread never waits for the device, and the caller joins them in the order it handed
 * them over. {@link #drain} waits until everything handed over is enqueued: before the caller touches the
 * auxiliary paths itself (timed, captured or point-to-point calls) and before teardown.
 */
public final class EnqueueWorker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EnqueueWorker.class);
    static final int RING = 8;
    /** How long a waiting side spins before it parks: a handed-over call is enqueued in tens of microseconds. */
    private static final long SPIN_NANOS = 50_000;

    private final Path[] aux;
    private final io.flexlink.balance.PathCounters counters;
    private final CallPlan[] plans;
    private final RuntimeEvent[] forks;
    /** Per ring slot, path and stream: recorded once the path's work of that call is enqueued. */
    private final RuntimeEvent[][][] done;
    /** The ring slot of the call this thread is enqueueing, for {@link #slotJoins}; this thread's alone. */
    private int slot;
    private final AuxiliaryLaunch.Joins slotJoins = this::doneEvent;
    private final Thread thread;
    /** The thread that handed the latest call over: woken if this thread fails. */
    private volatile Thread caller;
    private volatile long submitted;
    private volatile long enqueued;
    /** Calls the caller joined (only the caller's thread writes it). */
    private long joined;
    private volatile boolean stopping;
    private volatile FlexLinkException failure;

    EnqueueWorker(Backend backend, int device, int rank, Path[] aux, io.flexlink.balance.PathCounters counters) {
        this.aux = aux;
        this.counters = counters;
        this.plans = new CallPlan[RING];
        this.forks = new RuntimeEvent[RING];
        this.done = new RuntimeEvent[RING][aux.length][];
        for (int j = 0; j < RING; j++) {
            plans[j] = new CallPlan(aux.length);
            forks[j] = backend.createEvent(device, false);
            for (int i = 0; i < aux.length; i++) {
                done[j][i] = new RuntimeEvent[aux[i].streams().length];
                for (int k = 0; k < done[j][i].length; k++) {
                    done[j][i][k] = backend.createEvent(device, false);
                }
            }
        }
        this.thread = new Thread(this::work, "flexlink-enqueue-r" + rank);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** True when a call can be handed over now: a ring slot whose call was joined is free. */
    boolean hasRoom() {
        return submitted - joined < RING && running();
    }

    /** The fork event the next handed-over call records on its caller's stream (only when {@link #hasRoom}). */
    RuntimeEvent nextFork() {
        return forks[(int) (submitted % RING)];
    }

    /** Hands the auxiliary part of {@code p}, whose fork ({@link #nextFork}) is recorded, to the thread. */
    void submit(CallPlan p) {
        long seq = submitted;
        CallPlan copy = plans[(int) (seq % RING)];
        copy.call.set(p.call.collective, p.call.send, p.call.recv, p.call.count, p.call.type, p.call.op,
                p.call.root, p.call.stream);
        copy.call.uncaptured = p.call.uncaptured;
        copy.call.gate = p.call.gate;
        copy.call.gateValue = p.call.gateValue;
        System.arraycopy(p.lengths, 0, copy.lengths, 0, p.lengths.length);
        p.handedOver = seq;
        caller = Thread.currentThread();
        submitted = seq + 1;
        LockSupport.unpark(thread);
    }

    /**
     * The join stage of the handed-over call {@code p} (by its own number, {@link CallPlan#handedOver}: a call handed
     * over and then discarded must not shift the joins of the calls after it): waits until the thread enqueued it,
     * then makes the caller's stream wait for every path's work of it.
     */
    void join(CallPlan p, RuntimeStream callerStream) {
        long seq = p.handedOver;
        awaitEnqueued(seq + 1);
        joined = Math.max(joined, seq + 1);
        RuntimeEvent[][] ends = done[(int) (seq % RING)];
        for (int i = 0; i < aux.length; i++) {
            if (p.lengths[i + 1] > 0) {
                for (RuntimeEvent e : ends[i]) {
                    callerStream.waitEvent(e);
                }
            }
        }
    }

    /** Waits until everything handed over is enqueued (host work only; bounded by the thread's progress). */
    void drain() {
        awaitEnqueued(submitted);
    }

    private void awaitEnqueued(long count) {
        long start = System.nanoTime();
        while (enqueued < count && running()) {
            if (System.nanoTime() - start < SPIN_NANOS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(10_000);
            }
        }
        checkFailure();
        if (enqueued < count) {
            throw new FlexLinkException(Result.INVALID_USAGE, "communicator: aborted while its enqueue thread "
                    + "had calls to enqueue");
        }
    }

    private void checkFailure() {
        FlexLinkException f = failure;
        if (f != null) {
            throw new FlexLinkException(f.result(), "enqueue thread: " + f.detail(), f);
        }
    }

    /** The error that stopped the thread, or null. */
    FlexLinkException failure() {
        return failure;
    }

    /** Whether the thread still enqueues (not stopped, not failed). */
    boolean running() {
        return !stopping && failure == null;
    }

    private void work() {
        long next = 0;
        while (!stopping) {
            if (next >= submitted) {
                long start = System.nanoTime();
                while (next >= submitted && !stopping && System.nanoTime() - start < SPIN_NANOS) {
                    Thread.onSpinWait(); // the next rank's call of a group usually comes within microseconds
                }
                if (next >= submitted) {
                    LockSupport.parkNanos(200_000); // woken by submit(); the timeout bounds a missed wake-up
                }
                continue;
            }
            try {
                enqueue(plans[(int) (next % RING)], next);
            } catch (RuntimeException | Error e) {
                failure = e instanceof FlexLinkException ? (FlexLinkException) e
                        : new FlexLinkException(Result.INTERNAL_ERROR, "enqueue thread failed: " + e, e);
                LOG.warn("COLL enqueue thread stopped: {}", failure.getMessage());
                Thread c = caller;
                if (c != null) {
                    LockSupport.unpark(c);
                }
                return;
            }
            next++;
            enqueued = next;
        }
    }

    private RuntimeEvent doneEvent(int path, int stream) {
        return done[slot][path][stream];
    }

    private void enqueue(CallPlan p, long seq) {
        CollectiveCall c = p.call;
        slot = (int) (seq % RING);
        AuxiliaryLaunch.enqueue(aux, counters, p, forks[slot], slotJoins);
        c.stream = null; // no reference to a caller's stream outlives the hand-over
    }

    /** Stops the thread after the call it is enqueueing (an abort, or teardown); idempotent. */
    void stop() {
        stopping = true;
        LockSupport.unpark(thread);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the thread has ended (after {@link #close}: whether what it used could be freed). */
    boolean stopped() {
        return !thread.isAlive();
    }

    @Override
    public void close() {
        stop();
        if (thread.isAlive()) {
            // still inside a path's enqueue: its events stay allocated rather than freed under it
            LOG.warn("COLL enqueue thread {} did not stop: its events stay allocated", thread.getName());
            return;
        }
        for (int j = 0; j < RING; j++) {
            forks[j].close();
            for (RuntimeEvent[] es : done[j]) {
                for (RuntimeEvent e : es) {
                    e.close();
                }
            }
        }
    }
}
