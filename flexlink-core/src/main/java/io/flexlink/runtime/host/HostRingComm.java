package io.flexlink.runtime.host;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.BlockTransfers;
import io.flexlink.runtime.PeerOps;
import io.flexlink.sync.Exchanges;
import io.flexlink.sync.Lane;
import io.flexlink.sync.Staging;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ring collectives through host memory, on the caller's stream, built from the same staging protocol
 * as the PCIe path ({@link HostRingSchedule} enqueues each collective's steps). This class brackets every
 * call: it orders calls of different callers' streams on the staging slots, counts the calls still in
 * flight, and frees the staging area and scratch only once none of them can touch it any more.
 */
final class HostRingComm implements PrimaryComm {
    private final HostBackend backend;
    private final Staging staging;
    private final int rank;
    private final int size;
    private static final Logger LOG = LoggerFactory.getLogger(HostRingComm.class);
    private static final long DRAIN_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

    /** Calls enqueued whose last operation has not run yet. */
    private final RingCallsInFlight inFlight = new RingCallsInFlight();
    private final HostStream.Always doneOp = this::done;
    /** The caller's stream of the current call, with its pending flag operations. */
    private final Lane lane = new Lane(null);
    private final HostRingSchedule ring;
    /**
     * Recorded at the end of every ring call, waited on at the start of the next: calls from different
     * callers' streams use the same staging slots from item 0 on, so one must be over before the next
     * starts (the items of a call are numbered from 0; see io.flexlink.sync.Flags).
     */
    private final io.flexlink.runtime.RuntimeEvent lastCall;
    private boolean called;
    private final Exchanges exchanges;
    private final PeerOps blocks = new PeerOps();
    /** Set by close(): nothing touches the staging area from then on, but the memory's release. */
    private volatile boolean closed;

    HostRingComm(HostBackend backend, Staging staging, int rank, int size, int device) {
        this.backend = backend;
        this.staging = staging;
        this.rank = rank;
        this.size = size;
        this.ring = new HostRingSchedule(backend, staging, lane, rank, size, device);
        this.lastCall = backend.createEvent(device, false);
        this.exchanges = new Exchanges(rank, size);
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
        begin(stream);
        try {
            ring.allReduce(send, recv, count, type, op, stream);
        } finally {
            end(stream);
        }
    }

    @Override
    public void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        begin(stream);
        try {
            ring.allGather(send, recv, count, stride, type, stream);
        } finally {
            end(stream);
        }
    }

    @Override
    public void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op,
                              RuntimeStream stream) {
        begin(stream);
        try {
            ring.reduceScatter(send, recv, count, stride, type, op, stream);
        } finally {
            end(stream);
        }
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream) {
        begin(stream);
        try {
            ring.broadcast(send, recv, count, type, root, stream);
        } finally {
            end(stream);
        }
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream) {
        begin(stream);
        try {
            ring.reduce(send, recv, count, type, op, root, stream);
        } finally {
            end(stream);
        }
    }

    // ---- AlltoAll, Gather, Scatter and a group's sends and receives: transfers between pairs ----

    @Override
    public void allToAll(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        exchange(BlockTransfers.allToAll(blocks, size, send, recv, count, stride, type.size()), stream);
    }

    @Override
    public void gather(long send, long recv, long count, long stride, DataType type, int root, RuntimeStream stream) {
        exchange(BlockTransfers.gather(blocks, rank, size, root, send, recv, count, stride, type.size()), stream);
    }

    @Override
    public void scatter(long send, long recv, long count, long stride, DataType type, int root, RuntimeStream stream) {
        exchange(BlockTransfers.scatter(blocks, rank, size, root, send, recv, count, stride, type.size()), stream);
    }

    @Override
    public void exchange(PeerOps ops, RuntimeStream stream) {
        begin(stream);
        try {
            exchanges.run(staging, ops, lane, lane);
        } finally {
            end(stream);
        }
    }

    // ---- calls in flight on the callers' streams: close() must not free what they still use ----

    private void begin(RuntimeStream stream) {
        inFlight.begin();
        lane.bind(stream);
        if (called) {
            stream.waitEvent(lastCall);
        }
    }

    /** After the call's operations: an operation that runs even on a failed stream counts the call done. */
    private void end(RuntimeStream stream) {
        try {
            lane.flush();
            stream.record(lastCall);
            called = true;
            ((HostStream) stream).enqueue(doneOp);
        } catch (RuntimeException e) {
            done(); // the stream was closed: nothing of this call can run any more
        }
    }

    /** A call left its stream; the last one out after a close() that had to give up frees the memory. */
    private void done() {
        if (inFlight.done()) {
            LOG.info("INIT rank {}/{}: the host ring work that outlived close() ended; its memory is freed now",
                    rank, size);
            release();
        }
    }

    /**
     * Sets the ring's abort word (peers in any process see it), releases and cancels every wait on it.
     * Still works after a close() that had to leave the memory to a call in flight: that call may be the
     * one waiting, and only an abort releases it. Under the lock that guards freeing, so never after it.
     */
    @Override
    public void abort() {
        inFlight.unlessFreed(() -> {
            staging.abort();
            HostBackend.abortWaits(staging.memory());
        });
    }

    @Override
    public FlexLinkException asyncError() {
        int by = closed ? -1 : staging.abortedBy();
        return by < 0 ? null : new FlexLinkException(Result.REMOTE_ERROR, "host ring: rank " + by
                + " aborted the communicator");
    }

    @Override
    public String describeStall() {
        String s = closed ? null : staging.describeStall();
        return s == null ? null : "host ring: " + s;
    }

    /**
     * Frees the scratch and the staging reference once no call is left on a caller's stream, waiting up to
     * the watchdog's timeout (10 s without one). A stream still running a ring step then would touch freed
     * memory, so past that bound the memory is left to the last of those calls, which frees it when it
     * leaves its stream (a stream that never moves again keeps it: the WARN line says so).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        java.time.Duration t = backend.config().timeout();
        inFlight.drained(t.isZero() ? DRAIN_NANOS : t.toNanos());
        if (inFlight.freeAtClose()) {
            release();
        } else {
            LOG.warn("INIT rank {}/{}: host ring work still in flight on a caller's stream; its scratch and "
                    + "staging stay allocated until that work ends", rank, size);
        }
    }

    /** Once no call is left on a stream: releases the counters one last time when aborted, then frees. */
    private void release() {
        if (staging.abortedBy() >= 0) {
            staging.releaseAll(); // a write of a call that ended after the abort may have lowered a counter
        }
        ring.close();
        lastCall.close();
        staging.close();
    }
}
