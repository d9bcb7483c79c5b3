package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.runtime.host.FloatFormats;
import io.flexlink.verify.PreMulSumPattern;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

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
    private final Backend backend;
    /** Per local rank: mulsum's scaled input, and one device word per type holding the rank's scalar. */
    private final Scratch[] scaled;
    private final DeviceMemory[][] scalars;

    PrimaryCalls(PrimaryTransport transport, PrimaryComm[] comms, Backend backend) {
        super(comms.length);
        this.transport = transport;
        this.comms = comms;
        this.backend = backend;
        this.scaled = new Scratch[comms.length];
        this.scalars = new DeviceMemory[comms.length][DataType.values().length];
    }

    /**
     * mulsum on a transport that has only the built-ins: the rank's input times its scalar
     * ({@link PreMulSumPattern#scalar}) into scratch, on the call's stream, then a SUM of that, which is what
     * FlexLink itself does before its paths run. The scalar's word is written once per type and never changed.
     */
    private long preScale(int r, CallSpec c, long send, RuntimeStream s) {
        int t = c.type.ordinal();
        if (scalars[r][t] == null) {
            scalars[r][t] = backend.allocate(s.device(), 8);
            ByteBuffer b = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            b.putLong(0, FloatFormats.fromDouble(c.type, PreMulSumPattern.scalar(comms[r].rank())));
            backend.upload(scalars[r][t].address(), b);
            if (scaled[r] == null) {
                scaled[r] = new Scratch(backend, s.device());
            }
        }
        long n = c.collective.collective() == Collective.REDUCE_SCATTER ? c.shape.count * comms[r].size()
                : c.shape.count;
        long dst = scaled[r].ensure(n * c.type.size());
        s.scale(dst, send, n, c.type, scalars[r][t].address(), 0);
        return dst;
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
        ReduceOp op = c.op.dataOp();
        if (c.op.builtIn == null && c.collective.collective().reduces()) {
            send = preScale(r, c, send, s);
        }
        switch (c.collective.collective()) {
            case ALL_REDUCE: comm.allReduce(send, recv, n, c.type, op, s); break;
            case ALL_GATHER: comm.allGather(send, recv, n, n, c.type, s); break;
            case REDUCE_SCATTER: comm.reduceScatter(send, recv, n, n, c.type, op, s); break;
            case BROADCAST: comm.broadcast(send, recv, n, c.type, c.root, s); break;
            case REDUCE: comm.reduce(send, recv, n, c.type, op, c.root, s); break;
            case ALL_TO_ALL: comm.allToAll(send, recv, n, n, c.type, s); break;
            case GATHER: comm.gather(send, recv, n, n, c.type, c.root, s); break;
            case SCATTER: comm.scatter(send, recv, n, n, c.type, c.root, s); break;
            default: throw new IllegalStateException(c.collective + " is no collective call");
        }
    }

    /** The transport's own registration: none on the host ring (null). */
    @Override
    public AutoCloseable registerBuffer(int r, long address, long bytes) {
        return comms[r].register(address, bytes);
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
        for (int r = 0; r < comms.length; r++) { // after the transports: no queued work reads them any more
            if (scaled[r] != null) {
                scaled[r].close();
            }
            for (DeviceMemory m : scalars[r]) {
                if (m != null) {
                    m.close();
                }
            }
        }
    }
}
