package io.flexlink.bench;

import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;

/**
 * The baseline where there is no NCCL (the host backend): the backend's own primary transport called
 * directly through the runtime SPI (on the host backend, its ring through host memory), with no
 * FlexLink engine in between: no validation, no planning, no split, no events. AllGather and
 * ReduceScatter are called with the stride equal to the count, i.e. NCCL's contiguous layout.
 */
final class PrimaryCalls implements CallTarget {
    private final PrimaryTransport transport;
    private final PrimaryComm[] comms;

    PrimaryCalls(PrimaryTransport transport, PrimaryComm[] comms) {
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
    public void enqueue(CallSpec c, int from, int to, int iter) {
        boolean group = to - from > 1;
        if (group) {
            transport.groupStart();
        }
        try {
            for (int r = from; r < to; r++) {
                call(comms[r], c, c.ws.send(r, iter), c.ws.recv(r, iter), c.ws.stream(r));
            }
        } finally {
            if (group) {
                transport.groupEnd();
            }
        }
    }

    private static void call(PrimaryComm comm, CallSpec c, long send, long recv, RuntimeStream s) {
        long n = c.shape.count;
        switch (c.collective.collective()) {
            case ALL_REDUCE: comm.allReduce(send, recv, n, c.type, c.op, s); break;
            case ALL_GATHER: comm.allGather(send, recv, n, n, c.type, s); break;
            case REDUCE_SCATTER: comm.reduceScatter(send, recv, n, n, c.type, c.op, s); break;
            case BROADCAST: comm.broadcast(send, recv, n, c.type, c.root, s); break;
            default: comm.reduce(send, recv, n, c.type, c.op, c.root, s);
        }
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
