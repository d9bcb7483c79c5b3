package io.flexlink.hier;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RingChunks;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rail of the host backend: ring collectives over TCP between nodes that share no memory (rank
 * {@code r} sends to {@code r + 1} and receives from {@code r - 1} through a {@link NetChannel}), so that
 * emulated nodes on one machine are as separate as real ones. The algorithms are the host ring's:
 * AllReduce is a reduce-scatter ring then an all-gather ring, so each element is reduced by one rank and
 * copied to the others; a floating-point AVG divides each input by the rank count first, as NCCL does.
 * Every step enqueues "send chunk, then receive chunk", so each rank's n-th send meets its right
 * neighbour's n-th receive.
 */
final class TcpRail implements RailComm {
    private static final Logger LOG = LoggerFactory.getLogger(TcpRail.class);
    private static final long DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Channels a stuck stream may still touch: kept reachable, so that their slots are never freed under it. */
    private static final java.util.List<NetChannel> STUCK = new java.util.concurrent.CopyOnWriteArrayList<>();

    private final int rank;
    private final int size;
    private final NetChannel net;
    private final Scratch partial;
    private final Scratch scaled;
    /** Recorded after each call, on its stream: the next call on another stream waits for it; close drains it. */
    private final RuntimeEvent lastDone;
    private RuntimeStream lastStream;
    private volatile boolean aborted;
    private boolean closed;

    TcpRail(Backend backend, int rank, int size, int device, NetChannel net) {
        this.rank = rank;
        this.size = size;
        this.net = net;
        this.partial = new Scratch(backend, device);
        this.scaled = new Scratch(backend, device);
        this.lastDone = backend.createEvent(device, false);
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
    public String describe() {
        return "TCP ring";
    }

    @Override
    public long bytesReceived() {
        return net.bytesReceived();
    }

    /** Serializes calls across streams: the scratch and the slot sequence are this rail's, one call at a time. */
    private void begin(RuntimeStream stream) {
        if (lastStream != null && lastStream != stream) {
            stream.waitEvent(lastDone);
        }
    }

    private void end(RuntimeStream stream) {
        stream.record(lastDone);
        lastStream = stream;
    }

    /** {@code send} divided by the rank count into scratch, for a floating-point AVG: x / 2n + x / 2n is x / n exactly. */
    private long divided(long send, long elements, DataType type, RuntimeStream stream) {
        long dst = scaled.ensure(elements * type.size());
        stream.reduce(dst, send, send, elements, type, ReduceOp.AVG, 2 * size);
        return dst;
    }

    private static boolean floatAvg(DataType type, ReduceOp op) {
        return op == ReduceOp.AVG && type.isFloatingPoint();
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
        begin(stream);
        int sz = type.size();
        long align = Math.max(1, 256 / sz);
        long segLen = ((count + size - 1) / size + align - 1) / align * align;
        long ce = net.chunkElements(type);
        long nChunks = (segLen + ce - 1) / ce;
        if (floatAvg(type, op)) {
            send = divided(send, count, type, stream);
            op = ReduceOp.SUM;
        }
        for (int s = 0; s < size - 1; s++) {
            int sendSeg = Math.floorMod(rank - s, size);
            int recvSeg = Math.floorMod(rank - s - 1, size);
            ReduceOp step = op == ReduceOp.AVG && s < size - 2 ? ReduceOp.SUM : op;
            for (long c = 0; c < nChunks; c++) {
                long so = RingChunks.start(sendSeg, segLen, count, c, ce);
                net.send(stream, (s == 0 ? send : recv) + so * sz, RingChunks.length(sendSeg, segLen, count, c, ce) * sz);
                long ro = RingChunks.start(recvSeg, segLen, count, c, ce);
                net.receiveReduce(stream, recv + ro * sz, send + ro * sz, RingChunks.length(recvSeg, segLen, count, c, ce),
                        type, step, size);
            }
        }
        for (int s = 0; s < size - 1; s++) {
            int sendSeg = Math.floorMod(rank + 1 - s, size);
            int recvSeg = Math.floorMod(rank - s, size);
            for (long c = 0; c < nChunks; c++) {
                long so = RingChunks.start(sendSeg, segLen, count, c, ce);
                net.send(stream, recv + so * sz, RingChunks.length(sendSeg, segLen, count, c, ce) * sz);
                long ro = RingChunks.start(recvSeg, segLen, count, c, ce);
                net.receiveCopy(stream, recv + ro * sz, RingChunks.length(recvSeg, segLen, count, c, ce) * sz);
            }
        }
        end(stream);
    }


    @Override
    public void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        begin(stream);
        int sz = type.size();
        long own = recv + rank * stride * sz;
        if (own != send) {
            stream.copy(own, send, count * sz);
        }
        long ce = net.chunkElements(type);
        long nChunks = (count + ce - 1) / ce;
        for (int s = 0; s < size - 1; s++) {
            int sendBlk = Math.floorMod(rank - s, size);
            int recvBlk = Math.floorMod(rank - s - 1, size);
            long src = s == 0 ? send : recv + sendBlk * stride * sz;
            for (long c = 0; c < nChunks; c++) {
                long cs = c * ce;
                long cl = Math.min(ce, count - cs);
                net.send(stream, src + cs * sz, cl * sz);
                net.receiveCopy(stream, recv + (recvBlk * stride + cs) * sz, cl * sz);
            }
        }
        end(stream);
    }

    @Override
    public void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op,
                              RuntimeStream stream) {
        begin(stream);
        int sz = type.size();
        long part = size > 2 ? partial.ensure(count * sz) : 0;
        if (floatAvg(type, op)) {
            send = divided(send, (size - 1) * stride + count, type, stream);
            op = ReduceOp.SUM;
        }
        long ce = net.chunkElements(type);
        long nChunks = (count + ce - 1) / ce;
        for (int s = 0; s < size - 1; s++) {
            int sendBlk = Math.floorMod(rank - s - 1, size);
            int recvBlk = Math.floorMod(rank - s - 2, size);
            boolean last = s == size - 2;
            ReduceOp step = op == ReduceOp.AVG && !last ? ReduceOp.SUM : op;
            for (long c = 0; c < nChunks; c++) {
                long cs = c * ce;
                long cl = Math.min(ce, count - cs);
                net.send(stream, s == 0 ? send + (sendBlk * stride + cs) * sz : part + cs * sz, cl * sz);
                net.receiveReduce(stream, (last ? recv : part) + cs * sz, send + (recvBlk * stride + cs) * sz, cl,
                        type, step, size);
            }
        }
        end(stream);
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream) {
        begin(stream);
        int sz = type.size();
        if (rank == root && send != recv) {
            stream.copy(recv, send, count * sz);
        }
        int pos = Math.floorMod(rank - root, size);
        long ce = net.chunkElements(type);
        long nChunks = (count + ce - 1) / ce;
        long src = rank == root ? send : recv;
        for (long c = 0; c < nChunks; c++) {
            long cs = c * ce;
            long cl = Math.min(ce, count - cs);
            if (rank != root) {
                net.receiveCopy(stream, recv + cs * sz, cl * sz);
            }
            if (pos != size - 1) {
                net.send(stream, src + cs * sz, cl * sz);
            }
        }
        end(stream);
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream) {
        begin(stream);
        int sz = type.size();
        if (floatAvg(type, op)) {
            send = divided(send, count, type, stream);
            op = ReduceOp.SUM;
        }
        int pos = Math.floorMod(rank - root - 1, size);
        long acc = rank == root ? recv : pos == 0 ? send : partial.ensure(count * sz);
        ReduceOp step = op == ReduceOp.AVG && rank != root ? ReduceOp.SUM : op;
        long ce = net.chunkElements(type);
        long nChunks = (count + ce - 1) / ce;
        for (long c = 0; c < nChunks; c++) {
            long cs = c * ce;
            long cl = Math.min(ce, count - cs);
            if (pos != 0) {
                net.receiveReduce(stream, acc + cs * sz, send + cs * sz, cl, type, step, size);
            }
            if (rank != root) {
                net.send(stream, acc + cs * sz, cl * sz);
            }
        }
        end(stream);
    }

    @Override
    public FlexLinkException asyncError() {
        String why = net.failure();
        return why == null ? null : new FlexLinkException(Result.REMOTE_ERROR, "rail rank " + rank + "/" + size
                + ": " + why);
    }

    @Override
    public String describeStall() {
        return "rail (TCP ring): " + net.describe();
    }

    /** Stops the links and releases every stream waiting on them (their waits fail with REMOTE_ERROR). */
    @Override
    public void abort() {
        aborted = true;
        net.abort();
    }

    /**
     * Frees the channel and the scratch once the last call has left its stream, waiting up to 10 s (after
     * an abort the streams skip to their event records at once). A stream still inside a call then keeps
     * the memory: freeing it under a running copy would crash the process.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (lastStream != null) {
            long deadline = System.nanoTime() + DRAIN_NANOS;
            while (!lastDone.isComplete() && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(100_000);
            }
            if (!lastDone.isComplete()) {
                net.abort();
                STUCK.add(net);
                LOG.warn("INIT rail rank {}/{}: a stream is still inside a rail call; its memory stays allocated",
                        rank, size);
                return;
            }
        }
        net.close();
        partial.close();
        scaled.close();
        lastDone.close();
        if (aborted) {
            LOG.debug("INIT rail rank {}/{} closed after an abort", rank, size);
        }
    }
}
