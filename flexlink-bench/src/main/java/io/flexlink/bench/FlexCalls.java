package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.runtime.RuntimeStream;

/** FlexLink's communicators as a {@link CallTarget}: local rank i calls {@code comms[i]}. */
final class FlexCalls implements CallTarget {
    private final String label;
    private final Communicator[] comms;

    FlexCalls(String label, Communicator[] comms) {
        this.label = label;
        this.comms = comms;
    }

    Communicator[] communicators() {
        return comms;
    }

    @Override
    public String label() {
        return label;
    }

    @Override
    public void groupStart() {
        FlexLink.groupStart();
    }

    @Override
    public void groupEnd() {
        FlexLink.groupEnd();
    }

    @Override
    public void enqueue(CallSpec c, int from, int to, int iter) {
        boolean group = to - from > 1;
        if (group) {
            FlexLink.groupStart();
        }
        try {
            for (int r = from; r < to; r++) {
                call(comms[r], c, c.ws.send(r, iter), c.ws.recv(r, iter), c.ws.stream(r));
            }
        } finally {
            if (group) {
                FlexLink.groupEnd();
            }
        }
    }

    private static void call(Communicator comm, CallSpec c, long send, long recv, RuntimeStream s) {
        long n = c.shape.count;
        switch (c.collective.collective()) {
            case ALL_REDUCE: comm.allReduce(send, recv, n, c.type, c.op, s); break;
            case ALL_GATHER: comm.allGather(send, recv, n, c.type, s); break;
            case REDUCE_SCATTER: comm.reduceScatter(send, recv, n, c.type, c.op, s); break;
            case BROADCAST: comm.broadcast(send, recv, n, c.type, c.root, s); break;
            default: comm.reduce(send, recv, n, c.type, c.op, c.root, s);
        }
    }

    @Override
    public void abort() {
        for (Communicator c : comms) {
            try {
                c.abort();
            } catch (RuntimeException e) {
                // best effort: the run already failed
            }
        }
    }

    @Override
    public void close() {
        for (Communicator c : comms) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // best effort
            }
        }
    }
}
