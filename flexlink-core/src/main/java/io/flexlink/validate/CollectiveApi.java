package io.flexlink.validate;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.PreMulSum;
import io.flexlink.ReduceOp;
import io.flexlink.Reduction;
import io.flexlink.Stream;

/**
 * NCCL's collectives in both forms: the {@link Buffer} overloads check counts against buffer sizes and
 * devices, then every call goes to {@link #run} with addresses. Every communicator (one node's, several
 * nodes') is written against it, so that the API's rules are checked in one place.
 */
public abstract class CollectiveApi implements Communicator {
    protected final int rank;
    protected final int size;
    protected final int device;

    protected CollectiveApi(int rank, int size, int device) {
        this.rank = rank;
        this.size = size;
        this.device = device;
    }

    /** Fails a call on a closed communicator before its arguments are checked (NCCL's order of errors). */
    protected abstract void checkNotClosed();

    /** Validates and enqueues one call ({@code op} is ignored by collectives that do not reduce). */
    protected abstract void run(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
                      Stream stream);

    /**
     * Validates and enqueues one reducing call ({@code c}: AllReduce, ReduceScatter or Reduce) with
     * {@code op}, which the communicator checks is one of its own, open, and made for {@code type}.
     */
    protected abstract void runPreMulSum(Collective c, long send, long recv, long count, DataType type, PreMulSum op,
                                         int root, Stream stream);

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int device() {
        return device;
    }

    @Override
    public void allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.ALL_REDUCE, send, recv, count, type, 0, rank, size, device);
        allReduce(Validator.address(send), Validator.address(recv), count, type, op, stream);
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, Stream stream) {
        run(Collective.ALL_REDUCE, send, recv, count, type, op, 0, stream);
    }

    @Override
    public void allGather(Buffer send, Buffer recv, long sendCount, DataType type, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.ALL_GATHER, send, recv, sendCount, type, 0, rank, size, device);
        allGather(Validator.address(send), Validator.address(recv), sendCount, type, stream);
    }

    @Override
    public void allGather(long send, long recv, long sendCount, DataType type, Stream stream) {
        run(Collective.ALL_GATHER, send, recv, sendCount, type, ReduceOp.SUM, 0, stream);
    }

    @Override
    public void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.REDUCE_SCATTER, send, recv, recvCount, type, 0, rank, size, device);
        reduceScatter(Validator.address(send), Validator.address(recv), recvCount, type, op, stream);
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, DataType type, ReduceOp op, Stream stream) {
        run(Collective.REDUCE_SCATTER, send, recv, recvCount, type, op, 0, stream);
    }

    @Override
    public void broadcast(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.BROADCAST, send, recv, count, type, root, rank, size, device);
        broadcast(Validator.address(send), Validator.address(recv), count, type, root, stream);
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, Stream stream) {
        run(Collective.BROADCAST, send, recv, count, type, ReduceOp.SUM, root, stream);
    }

    @Override
    public void reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.REDUCE, send, recv, count, type, root, rank, size, device);
        reduce(Validator.address(send), Validator.address(recv), count, type, op, root, stream);
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, Stream stream) {
        run(Collective.REDUCE, send, recv, count, type, op, root, stream);
    }

    @Override
    public void allReduce(Buffer send, Buffer recv, long count, DataType type, Reduction op, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.ALL_REDUCE, send, recv, count, type, 0, rank, size, device);
        allReduce(Validator.address(send), Validator.address(recv), count, type, op, stream);
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, Reduction op, Stream stream) {
        if (op instanceof PreMulSum p) {
            runPreMulSum(Collective.ALL_REDUCE, send, recv, count, type, p, 0, stream);
        } else {
            run(Collective.ALL_REDUCE, send, recv, count, type, (ReduceOp) op, 0, stream);
        }
    }

    @Override
    public void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, Reduction op, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.REDUCE_SCATTER, send, recv, recvCount, type, 0, rank, size, device);
        reduceScatter(Validator.address(send), Validator.address(recv), recvCount, type, op, stream);
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, DataType type, Reduction op, Stream stream) {
        if (op instanceof PreMulSum p) {
            runPreMulSum(Collective.REDUCE_SCATTER, send, recv, recvCount, type, p, 0, stream);
        } else {
            run(Collective.REDUCE_SCATTER, send, recv, recvCount, type, (ReduceOp) op, 0, stream);
        }
    }

    @Override
    public void reduce(Buffer send, Buffer recv, long count, DataType type, Reduction op, int root, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.REDUCE, send, recv, count, type, root, rank, size, device);
        reduce(Validator.address(send), Validator.address(recv), count, type, op, root, stream);
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, Reduction op, int root, Stream stream) {
        if (op instanceof PreMulSum p) {
            runPreMulSum(Collective.REDUCE, send, recv, count, type, p, root, stream);
        } else {
            run(Collective.REDUCE, send, recv, count, type, (ReduceOp) op, root, stream);
        }
    }

    @Override
    public void allToAll(Buffer send, Buffer recv, long count, DataType type, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.ALL_TO_ALL, send, recv, count, type, 0, rank, size, device);
        allToAll(Validator.address(send), Validator.address(recv), count, type, stream);
    }

    @Override
    public void allToAll(long send, long recv, long count, DataType type, Stream stream) {
        run(Collective.ALL_TO_ALL, send, recv, count, type, ReduceOp.SUM, 0, stream);
    }

    @Override
    public void gather(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.GATHER, send, recv, count, type, root, rank, size, device);
        gather(Validator.address(send), Validator.address(recv), count, type, root, stream);
    }

    @Override
    public void gather(long send, long recv, long count, DataType type, int root, Stream stream) {
        run(Collective.GATHER, send, recv, count, type, ReduceOp.SUM, root, stream);
    }

    @Override
    public void scatter(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.SCATTER, send, recv, count, type, root, rank, size, device);
        scatter(Validator.address(send), Validator.address(recv), count, type, root, stream);
    }

    @Override
    public void scatter(long send, long recv, long count, DataType type, int root, Stream stream) {
        run(Collective.SCATTER, send, recv, count, type, ReduceOp.SUM, root, stream);
    }

    @Override
    public void send(Buffer buff, long count, DataType type, int peer, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.SEND, buff, null, count, type, peer, rank, size, device);
        send(Validator.address(buff), count, type, peer, stream);
    }

    @Override
    public void send(long buff, long count, DataType type, int peer, Stream stream) {
        run(Collective.SEND, buff, 0, count, type, ReduceOp.SUM, peer, stream);
    }

    @Override
    public void recv(Buffer buff, long count, DataType type, int peer, Stream stream) {
        checkNotClosed();
        Validator.checkBuffers(Collective.RECV, null, buff, count, type, peer, rank, size, device);
        recv(Validator.address(buff), count, type, peer, stream);
    }

    @Override
    public void recv(long buff, long count, DataType type, int peer, Stream stream) {
        run(Collective.RECV, 0, buff, count, type, ReduceOp.SUM, peer, stream);
    }
}
