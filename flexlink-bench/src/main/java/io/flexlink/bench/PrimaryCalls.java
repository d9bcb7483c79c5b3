package io.flexlink.bench;

import io.flexlink.DataType;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;

/**
 * The baseline where there is no NCCL (the host backend): the backend's own primary transport called
 * directly through the runtime SPI (on the host backend, its ring through host memory), with no
 * FlexLink engine in between: no validation, no planning, no split, no events. The blocked
 * collectives (AllGather, ReduceScatter, AlltoAll, Gather, Scatter) are called with the stride equal to
 * the count, i.e. NCCL's contiguous layout; sendrecv and hypercube use the transport's grouped exchange.
 */
final class PrimaryCalls extends RankCalls {
    private final PrimaryTransport transport;
    private final PrimaryComm[] comms;

    PrimaryCalls(PrimaryTransport transport, PrimaryComm[] comms) {
        super(comms.length);
        this.transport = transport;
        this.comms = comms;
    }

    @Override
    public String label() {
        return transport.describe() + ", called directly";
    }

    @Override
    public void groupStart() {
        transport.groupStart();
    }

    @Override
    public void groupEnd() {
        transport.groupEnd();
    }

    @Override
    void collective(int r, CallSpec c, long send, long recv, RuntimeStream s) {
        PrimaryComm comm = comms[r];
        long n = c.shape.count;
        switch (c.collective.collective()) {
            case ALL_REDUCE: comm.allReduce(send, recv, n, c.type, c.op, s); break;
            case ALL_GATHER: comm.allGather(send, recv, n, n, c.type, s); break;
            case REDUCE_SCATTER: comm.reduceScatter(send, recv, n, n, c.type, c.op, s); break;
            case BROADCAST: comm.broadcast(send, recv, n, c.type, c.root, s); break;
            case REDUCE: comm.reduce(send, recv, n, c.type, c.op, c.root, s); break;
            case ALL_TO_ALL: comm.allToAll(send, recv, n, n, c.type, s); break;
            case GATHER: comm.gather(send, recv, n, n, c.type, c.root, s); break;
            case SCATTER: comm.scatter(send, recv, n, n, c.type, c.root, s); break;
            default: throw new IllegalStateException(c.collective + " is no collective call");
        }
    }

    /** The transport takes a rank's transfers of one group together. */
    @Override
    void exchange(int r, PeerOps ops, DataType type, RuntimeStream s) {
        comms[r].exchange(ops, s);
    }

    @Override
    public void abort() {
        for (PrimaryComm c : comms) {
            try {
                c.abort();
            } catch (RuntimeException e) {
                // best effort
            }
        }
    }

    @Override
    public void close() {
        for (PrimaryComm c : comms) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // best effort
            }
        }
    }
}
