package io.flexlink.path;

import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeStream;

/**
 * The primary path: the backend's own collectives (NCCL over NVLink on GPUs) on the caller's stream.
 * A slice of AllGather's output (or ReduceScatter's input) is strided across rank blocks; the primary
 * collectives take that stride, so the slice is moved in place with no extra copy.
 */
public final class PrimaryPath implements Path {
    private static final RuntimeStream[] NONE = new RuntimeStream[0];

    private final PrimaryComm comm;

    public PrimaryPath(PrimaryComm comm) {
        this.comm = comm;
    }

    public PrimaryComm comm() {
        return comm;
    }

    @Override
    public String name() {
        return "primary";
    }

    @Override
    public RuntimeStream[] streams() {
        return NONE;
    }

    /** NCCL's collectives are capturable; a backend without graphs never captures. */
    @Override
    public boolean capturable() {
        return true;
    }

    @Override
    public void enqueue(CollectiveCall call, long offset, long length) {
        int sz = call.type.size();
        long off = offset * sz;
        long recv = call.recv == 0 ? 0 : call.recv + off;
        long send = call.send == 0 ? 0 : call.send + off;
        switch (call.collective) {
            case ALL_REDUCE:
                comm.allReduce(send, recv, length, call.type, call.op, call.stream);
                break;
            case ALL_GATHER:
                comm.allGather(send, recv, length, call.count, call.type, call.stream);
                break;
            case REDUCE_SCATTER:
                comm.reduceScatter(send, recv, length, call.count, call.type, call.op, call.stream);
                break;
            case BROADCAST:
                comm.broadcast(send, recv, length, call.type, call.root, call.stream);
                break;
            case REDUCE:
                comm.reduce(send, recv, length, call.type, call.op, call.root, call.stream);
                break;
            case ALL_TO_ALL:
                comm.allToAll(send, recv, length, call.count, call.type, call.stream);
                break;
            case GATHER:
                comm.gather(send, recv, length, call.count, call.type, call.root, call.stream);
                break;
            case SCATTER:
                comm.scatter(send, recv, length, call.count, call.type, call.root, call.stream);
                break;
            default:
                throw new IllegalStateException("primary: " + call.collective + " is enqueued as an exchange");
        }
    }

    @Override
    public void exchange(io.flexlink.runtime.PeerOps ops, RuntimeStream stream) {
        comm.exchange(ops, stream);
    }

    /** The primary communicator's registration of a user buffer ({@link PrimaryComm#register}), or null. */
    public AutoCloseable register(long address, long bytes) {
        return comm.register(address, bytes);
    }

    /** The primary communicator's windows and one-sided calls ({@link PrimaryComm#oneSided}), or null. */
    public io.flexlink.runtime.OneSided oneSided() {
        return comm.oneSided();
    }

    @Override
    public void abort() {
        comm.abort();
    }

    @Override
    public io.flexlink.FlexLinkException asyncError() {
        return comm.asyncError();
    }

    @Override
    public String describeStall() {
        return comm.describeStall();
    }

    /** Closes the primary communicator; idempotent, and retried by a later call where it could not free yet. */
    @Override
    public void close() {
        comm.close();
    }
}
