package io.flexlink.hier;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeStream;

/**
 * A rail on the backend's primary transport: NCCL on CUDA, whose communicators span nodes by themselves
 * (its own bootstrap, sockets or InfiniBand). The host backend's primary transport shares memory between
 * its ranks and so cannot cross a node; its rails are {@link TcpRail}s.
 */
final class PrimaryRail implements RailComm {
    private final PrimaryComm comm;
    private final String transport;

    PrimaryRail(PrimaryComm comm, String transport) {
        this.comm = comm;
        this.transport = transport;
    }

    @Override
    public AutoCloseable register(long address, long bytes) {
        return comm.register(address, bytes);
    }

    @Override
    public int rank() {
        return comm.rank();
    }

    @Override
    public int size() {
        return comm.size();
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
        comm.allReduce(send, recv, count, type, op, stream);
    }

    @Override
    public void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        comm.allGather(send, recv, count, stride, type, stream);
    }

    @Override
    public void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op,
                              RuntimeStream stream) {
        comm.reduceScatter(send, recv, count, stride, type, op, stream);
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream) {
        comm.broadcast(send, recv, count, type, root, stream);
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream) {
        comm.reduce(send, recv, count, type, op, root, stream);
    }

    @Override
    public FlexLinkException asyncError() {
        return comm.asyncError();
    }

    @Override
    public String describeStall() {
        return comm.describeStall();
    }

    @Override
    public void abort() {
        comm.abort();
    }

    @Override
    public void close() {
        comm.close();
    }

    @Override
    public String describe() {
        return transport;
    }
}
