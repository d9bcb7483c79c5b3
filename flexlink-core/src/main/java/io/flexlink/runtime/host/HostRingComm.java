package io.flexlink.runtime.host;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.runtime.BlockTransfers;
import io.flexlink.runtime.PeerOps;
import io.flexlink.sync.Exchanges;
import io.flexlink.sync.Lane;
import io.flexlink.sync.Rows;
import io.flexlink.sync.Staging;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ring collectives through host memory, on the caller's stream, built from the same staging protocol
 * as the PCIe path: rank {@code r} sends to {@code r+1} and receives from {@code r-1}. Every step
 * enqueues "send chunk, then receive chunk", so all ranks walk the same sequence of positions and no
 * rank can wait on a position its neighbour has not reached. AllReduce is a reduce-scatter ring then an
 * all-gather ring, so each element is reduced by one rank and copied to the others: results are
 * bit-identical on every rank.
 */
final class HostRingComm implements PrimaryComm {
    private final HostBackend backend;
    private final Staging staging;
    private final int rank;
    private final int size;
    private final int device;
    private final int left;
    private final long toRight;
    private static final Logger LOG = LoggerFactory.getLogger(HostRingComm.class);
    private static final long DRAIN_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

    private final Scratch scratch;
    /** This rank's input divided by the rank count, for a floating-point AVG. */
    private final ScaledInput scaled;
    /** Calls enqueued whose last operation has not run yet. */
    private final RingCallsInFlight inFlight = new RingCallsInFlight();
    private final HostStream.Always doneOp = this::done;
    /** The caller's stream of the current call, with its pending flag operations. */
    private final Lane lane = new Lane(null);
    /**
     * Recorded at the end of every ring call, waited on at the start of the next: calls from different
     * callers' streams use the same staging slots from item 0 on, so one must be over before the next
     * starts (the items of a call are numbered from 0; see io.flexlink.sync.Flags).
     */
    private final io.flexlink.runtime.RuntimeEvent lastCall;
    private boolean called;
    private final Rows rows = new Rows();
    private final Exchanges exchanges;
    private final PeerOps blocks = new PeerOps();
    /** Set by close(): nothing touches the staging area from then on, but the memory's release. */
    private volatile boolean closed;

    HostRingComm(HostBackend backend, Staging staging, int rank, int size, int device) {
        this.backend = backend;
        this.staging = staging;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.left = (rank - 1 + size) % size;
        this.toRight = 1L << ((rank + 1) % size);
        this.scratch = new Scratch(backend, device);
        this.scaled = new ScaledInput(backend, device, size);
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

    private static long chunks(long elements, long ce) {
        return (elements + ce - 1) / ce;
    }

    /** Item {@code idx} of this call to the right neighbour. */
    private void sendRight(long idx, long src, long bytes) {
        staging.send(lane, (int) idx, rows.set(src, 0, bytes), toRight);
    }

    /** Item {@code idx} of this call from the left neighbour, copied to {@code dst}. */
    private void receiveLeft(long idx, long dst, long bytes) {
        staging.receive(lane, (int) idx, 1L << left, false, rows.set(dst, 0, bytes));
    }

    /** Item {@code idx} from the left neighbour, reduced: {@code dst = a op item}. */
    private void receiveLeftReduce(long idx, long dst, long a, long count, DataType type, ReduceOp op) {
        long b = staging.receiveRows(lane, (int) idx, 1L << left, false, count * type.size());
        lane.reduce(dst, a, b, count, type, op, size);
    }

    private long chunkElements(DataType type) {
        return staging.slotBytes() / type.size();
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
        begin(stream);
        try {
            allReduceRing(send, recv, count, type, op, stream);
        } finally {
            end(stream);
        }
    }

    private void allReduceRing(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
        int sz = type.size();
        if (size == 1) {
            if (send != recv) {
                stream.copy(recv, send, count * sz);
            }
            return;
        }
        long align = Math.max(1, 256 / sz);
        long segLen = ((count + size - 1) / size + align - 1) / align * align;
        long ce = chunkElements(type);
        long nChunks = chunks(segLen, ce);
        long idx = 0;
        boolean scaledInput = scaled.applies(type, op);
        if (scaledInput) {
            send = scaled.divide(send, count, type, stream);
            op = ReduceOp.SUM;
        }
        for (int s = 0; s < size - 1; s++) {
            int sendSeg = Math.floorMod(rank - s, size);
            int recvSeg = Math.floorMod(rank - s - 1, size);
            ReduceOp step = op == ReduceOp.AVG && s < size - 2 ? ReduceOp.SUM : op;
            for (long c = 0; c < nChunks; c++, idx++) {
                long so = chunkStart(sendSeg, segLen, count, c, ce);
                long sl = chunkLength(sendSeg, segLen, count, c, ce);
                sendRight(idx, (s == 0 ? send : recv) + so * sz, sl * sz);
                long ro = chunkStart(recvSeg, segLen, count, c, ce);
                long rl = chunkLength(recvSeg, segLen, count, c, ce);
                receiveLeftReduce(idx, recv + ro * sz, send + ro * sz, rl, type, step);
            }
        }
        for (int s = 0; s < size - 1; s++) {
            int sendSeg = Math.floorMod(rank + 1 - s, size);
            int recvSeg = Math.floorMod(rank - s, size);
            for (long c = 0; c < nChunks; c++, idx++) {
                long so = chunkStart(sendSeg, segLen, count, c, ce);
                long sl = chunkLength(sendSeg, segLen, count, c, ce);
                sendRight(idx, recv + so * sz, sl * sz);
                long ro = chunkStart(recvSeg, segLen, count, c, ce);
                long rl = chunkLength(recvSeg, segLen, count, c, ce);
                receiveLeft(idx, recv + ro * sz, rl * sz);
            }
        }
        if (scaledInput) {
            scaled.done(stream);
        }
    }

    /** First element of chunk {@code c} of segment {@code seg}. */
    private static long chunkStart(int seg, long segLen, long count, long c, long ce) {
        long start = Math.min(count, seg * segLen);
        long end = Math.min(count, start + segLen);
        return Math.min(end, start + c * ce);
    }

    private static long chunkLength(int seg, long segLen, long count, long c, long ce) {
        long start = Math.min(count, seg * segLen);
        long end = Math.min(count, start + segLen);
        long cs = Math.min(end, start + c * ce);
        return Math.min(ce, end - cs);
    }

    @Override
    public void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        begin(stream);
        try {
            allGatherRing(send, recv, count, stride, type, stream);
        } finally {
            end(stream);
        }
    }

    private void allGatherRing(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        int sz = type.size();
        long own = recv + rank * stride * sz;
        if (own != send) {
            stream.copy(own, send, count * sz);
        }
        if (size == 1) {
            return;
        }
        long ce = chunkElements(type);
        long nChunks = chunks(count, ce);
        long idx = 0;
        for (int s = 0; s < size - 1; s++) {
            int sendBlk = Math.floorMod(rank - s, size);
            int recvBlk = Math.floorMod(rank - s - 1, size);
            long src = s == 0 ? send : recv + sendBlk * stride * sz;
            for (long c = 0; c < nChunks; c++, idx++) {
                long cs = c * ce;
                long cl = Math.min(ce, count - cs);
                sendRight(idx, src + cs * sz, cl * sz);
                receiveLeft(idx, recv + (recvBlk * stride + cs) * sz, cl * sz);
            }
        }
    }

    @Override
    public void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op,
                              RuntimeStream stream) {
        begin(stream);
        try {
            reduceScatterRing(send, recv, count, stride, type, op, stream);
        } finally {
            end(stream);
        }
    }

    private void reduceScatterRing(long send, long recv, long count, long stride, DataType type, ReduceOp op,
                              RuntimeStream stream) {
        int sz = type.size();
        if (size == 1) {
            if (send != recv) {
                stream.copy(recv, send, count * sz);
            }
            return;
        }
        long partial = size > 2 ? scratch.ensure(count * sz) : 0;
        boolean scaledInput = scaled.applies(type, op);
        if (scaledInput) {
            send = scaled.divide(send, (size - 1) * stride + count, type, stream);
            op = ReduceOp.SUM;
        }
        long ce = chunkElements(type);
        long nChunks = chunks(count, ce);
        long idx = 0;
        for (int s = 0; s < size - 1; s++) {
            int sendBlk = Math.floorMod(rank - s - 1, size);
            int recvBlk = Math.floorMod(rank - s - 2, size);
            boolean last = s == size - 2;
            ReduceOp step = op == ReduceOp.AVG && !last ? ReduceOp.SUM : op;
            for (long c = 0; c < nChunks; c++, idx++) {
                long cs = c * ce;
                long cl = Math.min(ce, count - cs);
                long src = s == 0 ? send + (sendBlk * stride + cs) * sz : partial + cs * sz;
                sendRight(idx, src, cl * sz);
                long dst = (last ? recv : partial) + cs * sz;
                receiveLeftReduce(idx, dst, send + (recvBlk * stride + cs) * sz, cl, type, step);
            }
        }
        if (scaledInput) {
            scaled.done(stream);
        }
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream) {
        begin(stream);
        try {
            broadcastRing(send, recv, count, type, root, stream);
        } finally {
            end(stream);
        }
    }

    private void broadcastRing(long send, long recv, long count, DataType type, int root, RuntimeStream stream) {
        int sz = type.size();
        if (rank == root && send != recv) {
            stream.copy(recv, send, count * sz);
        }
        if (size == 1) {
            return;
        }
        int pos = Math.floorMod(rank - root, size);
        long ce = chunkElements(type);
        long nChunks = chunks(count, ce);
        long src = rank == root ? send : recv;
        for (long c = 0; c < nChunks; c++) {
            long cs = c * ce;
            long cl = Math.min(ce, count - cs);
            if (rank != root) {
                receiveLeft(c, recv + cs * sz, cl * sz);
            }
            if (pos != size - 1) {
                sendRight(c, src + cs * sz, cl * sz);
            }
        }
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream) {
        begin(stream);
        try {
            reduceRing(send, recv, count, type, op, root, stream);
        } finally {
            end(stream);
        }
    }

    private void reduceRing(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream) {
        int sz = type.size();
        if (size == 1) {
            if (send != recv) {
                stream.copy(recv, send, count * sz);
            }
            return;
        }
        boolean scaledInput = scaled.applies(type, op);
        if (scaledInput) {
            send = scaled.divide(send, count, type, stream);
            op = ReduceOp.SUM;
        }
        int pos = Math.floorMod(rank - root - 1, size);
        long acc = rank == root ? recv : pos == 0 ? send : scratch.ensure(count * sz);
        ReduceOp step = op == ReduceOp.AVG && rank != root ? ReduceOp.SUM : op;
        long ce = chunkElements(type);
        long nChunks = chunks(count, ce);
        for (long c = 0; c < nChunks; c++) {
            long cs = c * ce;
            long cl = Math.min(ce, count - cs);
            if (pos != 0) {
                receiveLeftReduce(c, acc + cs * sz, send + cs * sz, cl, type, step);
            }
            if (rank != root) {
                sendRight(c, acc + cs * sz, cl * sz);
            }
        }
        if (scaledInput) {
            scaled.done(stream);
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
        scratch.close();
        scaled.close();
        lastCall.close();
        staging.close();
    }
}
