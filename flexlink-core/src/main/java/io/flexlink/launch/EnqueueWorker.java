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
 * The communicator's enqueue thread: it enqueues the auxiliary paths' part of split calls, so that the
 * thread that makes the call (one thread may drive every GPU of a machine) only enqueues the fork, the
 * primary collective and the join, and the ranks' auxiliary work is enqueued in parallel. The call is
 * still stream-ordered: the caller's stream waits on a join word ({@link JoinFlags}) that the auxiliary
 * paths' last stream sets once the call's work ran; the paths wait on a fork event recorded on the caller's
 * stream (a ring of them, each reused only after the thread waited on it). Calls are handed over in order
 * through a ring of plans, copied (no allocation), and the thread enqueues them in that order.
 *
 * <p>The thread never waits for the device. The caller waits on the host only when the ring is full
 * (the thread is far behind), and {@link #drain} waits until everything handed over is enqueued: before the
 * caller touches the auxiliary paths itself (timed, captured or point-to-point calls) and before teardown.
 */
public final class EnqueueWorker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EnqueueWorker.class);
    static final int RING = JoinFlags.RING;

    private final Path[] aux;
    private final io.flexlink.balance.PathCounters counters;
    private final CallPlan[] plans;
    private final RuntimeEvent[] forks;
    private final RuntimeEvent[][] done;
    private final JoinFlags joins;
    private final Thread thread;
    private volatile long submitted;
    private volatile long enqueued;
    private volatile boolean stopping;
    private volatile FlexLinkException failure;

    EnqueueWorker(Backend backend, int device, int rank, Path[] aux, io.flexlink.balance.PathCounters counters) {
        this.aux = aux;
        this.counters = counters;
        this.plans = new CallPlan[RING];
        this.forks = new RuntimeEvent[RING];
        for (int i = 0; i < RING; i++) {
            plans[i] = new CallPlan(aux.length);
            forks[i] = backend.createEvent(device, false);
        }
        this.done = new RuntimeEvent[aux.length][];
        for (int i = 0; i < aux.length; i++) {
            done[i] = new RuntimeEvent[aux[i].streams().length];
            for (int k = 0; k < done[i].length; k++) {
                done[i][k] = backend.createEvent(device, false);
            }
        }
        this.joins = new JoinFlags(backend, device);
        this.thread = new Thread(this::work, "flexlink-enqueue-r" + rank);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /**
     * The fork event the next call records on its caller's stream; waits (host work only) while the thread is
     * a whole ring behind, so that neither the event nor the plan slot is still in use.
     */
    RuntimeEvent reserveFork() {
        while (submitted - enqueued >= RING - 1 && !stopping && failure == null) {
            LockSupport.parkNanos(20_000);
        }
        checkFailure();
        return forks[(int) (submitted % RING)];
    }

    /**
     * Hands the auxiliary part of {@code p}, whose fork was {@link #reserveFork}, to the thread and makes the
     * caller's stream wait for it.
     */
    void submit(CallPlan p) {
        long seq = submitted;
        CallPlan copy = plans[(int) (seq % RING)];
        copy.call.set(p.call.collective, p.call.send, p.call.recv, p.call.count, p.call.type, p.call.op,
                p.call.root, p.call.stream);
        System.arraycopy(p.lengths, 0, copy.lengths, 0, p.lengths.length);
        joins.awaitOnCaller(p.call.stream, seq);
        submitted = seq + 1;
        if (failure != null || stopping) {
            joins.releaseAll(); // the thread is gone, or may have released before this call came
        }
        LockSupport.unpark(thread);
    }

    /** Waits until everything handed over is enqueued (host work only; bounded by the thread's progress). */
    void drain() {
        while (enqueued < submitted && !stopping && failure == null) {
            LockSupport.parkNanos(10_000);
        }
        checkFailure();
    }

    /** True when nothing handed over is still to be enqueued. */
    boolean idle() {
        return enqueued >= submitted;
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

    private void work() {
        long next = 0;
        while (!stopping) {
            if (next >= submitted) {
                LockSupport.parkNanos(50_000); // woken by submit(); the timeout bounds a missed wake-up
                continue;
            }
            try {
                enqueue(plans[(int) (next % RING)], next);
            } catch (RuntimeException | Error e) {
                failure = e instanceof FlexLinkException ? (FlexLinkException) e
                        : new FlexLinkException(Result.INTERNAL_ERROR, "enqueue thread failed: " + e, e);
                LOG.warn("COLL enqueue thread stopped: {}", failure.getMessage());
                joins.releaseAll(); // the callers' streams must not wait for work that will never come
                return;
            }
            next++;
            enqueued = next;
        }
    }

    private void enqueue(CallPlan p, long seq) {
        CollectiveCall c = p.call;
        RuntimeEvent fork = forks[(int) (seq % RING)];
        long offset = p.lengths[0];
        int lastPath = -1;
        for (int i = 0; i < aux.length; i++) {
            long n = p.lengths[i + 1];
            if (n == 0) {
                continue;
            }
            for (RuntimeStream s : aux[i].streams()) {
                s.waitEvent(fork);
            }
            aux[i].enqueue(c, offset, n);
            offset += n;
            counters.add(i + 1, n * c.type.size());
            lastPath = i;
        }
        c.stream = null; // no reference to a caller's stream outlives the hand-over
        if (lastPath < 0) {
            return;
        }
        // the last stream of the last path signals the caller once every other used stream is done too
        RuntimeStream[] lastStreams = aux[lastPath].streams();
        RuntimeStream last = lastStreams[lastStreams.length - 1];
        for (int i = 0; i <= lastPath; i++) {
            if (p.lengths[i + 1] == 0) {
                continue;
            }
            RuntimeStream[] ps = aux[i].streams();
            for (int k = 0; k < ps.length; k++) {
                if (ps[k] != last) {
                    ps[k].record(done[i][k]);
                    last.waitEvent(done[i][k]);
                }
            }
        }
        joins.signalFromPath(last, seq);
    }

    /**
     * After {@link #stop}: releases every caller's stream waiting on a join (an abort): the calls the thread
     * never enqueued, and those whose paths' streams failed or hang and will never signal. Their results
     * are garbage, as after NCCL's abort; their memory stays safe (the host backend frees memory only
     * after the streams ran what they had queued, CUDA's free synchronizes the device).
     */
    void releaseAll() {
        joins.releaseAll();
    }

    /** Stops the thread after the call it is enqueueing; idempotent. */
    void stop() {
        stopping = true;
        LockSupport.unpark(thread);
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
        if (thread.isAlive()) {
            // still inside a path's enqueue: its events and words stay allocated rather than freed under it
            LOG.warn("COLL enqueue thread {} did not stop: its events and join words stay allocated", thread.getName());
            return;
        }
        for (RuntimeEvent e : forks) {
            e.close();
        }
        for (RuntimeEvent[] es : done) {
            for (RuntimeEvent e : es) {
                e.close();
            }
        }
        joins.close();
    }
}
