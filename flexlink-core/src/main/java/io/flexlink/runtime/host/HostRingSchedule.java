package io.flexlink.runtime.host;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.RingChunks;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.sync.Lane;
import io.flexlink.sync.Rows;
import io.flexlink.sync.Staging;

/**
 * The sends and receives of each ring collective of a {@link HostRingComm}, in the order they are
 * enqueued: rank {@code r} sends to {@code r+1} and receives from {@code r-1}, item by item, on the
 * call's {@link Lane}. Every step enqueues "send chunk, then receive chunk", so all ranks walk the same
 * sequence of positions and no rank can wait on a position its neighbour has not reached. Holds the
 * ring's scratch and averaged input; the communicator brackets each call and decides when to free them.
 */
final class HostRingSchedule implements AutoCloseable {
    private final Staging staging;
    private final Lane lane;
    private final int rank;
    private final int size;
    private final int left;
    private final long toRight;
    private final Scratch scratch;
    /** This rank's input divided by the rank count, for a floating-point AVG. */
    private final ScaledInput scaled;
    private final Rows rows = new Rows();

    HostRingSchedule(HostBackend backend, Staging staging, Lane lane, int rank, int size, int device) {
        this.staging = staging;
        this.lane = lane;
        this.rank = rank;
        this.size = size;
        this.left = (rank - 1 + size) % size;
        this.toRight = 1L << ((rank + 1) % size);
        this.scratch = new Scratch(backend, device);
        this.scaled = new ScaledInput(backend, device, size);
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

    /**
     * A reduce-scatter ring then an all-gather ring, so each element is reduced by one rank and copied to
     * the others: results are bit-identical on every rank.
     */
    void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
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
                long so = RingChunks.start(sendSeg, segLen, count, c, ce);
                long sl = RingChunks.length(sendSeg, segLen, count, c, ce);
                sendRight(idx, (s == 0 ? send : recv) + so * sz, sl * sz);
                long ro = RingChunks.start(recvSeg, segLen, count, c, ce);
                long rl = RingChunks.length(recvSeg, segLen, count, c, ce);
                receiveLeftReduce(idx, recv + ro * sz, send + ro * sz, rl, type, step);
            }
        }
        for (int s = 0; s < size - 1; s++) {
            int sendSeg = Math.floorMod(rank + 1 - s, size);
            int recvSeg = Math.floorMod(rank - s, size);
            for (long c = 0; c < nChunks; c++, idx++) {
                long so = RingChunks.start(sendSeg, segLen, count, c, ce);
                long sl = RingChunks.length(sendSeg, segLen, count, c, ce);
                sendRight(idx, recv + so * sz, sl * sz);
                long ro = RingChunks.start(recvSeg, segLen, count, c, ce);
                long rl = RingChunks.length(recvSeg, segLen, count, c, ce);
                receiveLeft(idx, recv + ro * sz, rl * sz);
            }
        }
        if (scaledInput) {
            scaled.done(stream);
        }
    }


    void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
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

    void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op,
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

    void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream) {
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

    void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream) {
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

    /** Frees the scratch, then the averaged input's buffer and event. */
    @Override
    public void close() {
        scratch.close();
        scaled.close();
    }
}
