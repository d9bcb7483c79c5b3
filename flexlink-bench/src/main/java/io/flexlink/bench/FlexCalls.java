package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.PreMulSum;
import io.flexlink.Reduction;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.verify.PreMulSumPattern;

/** FlexLink's communicators as a {@link CallTarget}: local rank i calls {@code comms[i]}. */
final class FlexCalls extends RankCalls {
    private final String label;
    private final Communicator[] comms;
    /** Per local rank and type, its mulsum operation (made at first use, kept: a call allocates nothing). */
    private final PreMulSum[][] preMulSums;

    FlexCalls(String label, Communicator[] comms) {
        super(comms.length);
        this.label = label;
        this.comms = comms;
        this.preMulSums = new PreMulSum[comms.length][DataType.values().length];
    }

    /** The call's reduction on local rank {@code r}: a built-in, or the rank's PreMulSum with nccl-tests' scalar. */
    private Reduction reduction(int r, CallSpec c) {
        if (c.op.builtIn != null) {
            return c.op.builtIn;
        }
        PreMulSum op = preMulSums[r][c.type.ordinal()];
        if (op == null) {
            op = comms[r].createPreMulSum(PreMulSumPattern.scalar(comms[r].rank()), c.type);
            preMulSums[r][c.type.ordinal()] = op;
        }
        return op;
    }

    Communicator[] communicators() {
        return comms;
    }

    @Override
    public String label() {
        return label;
    }

    /** A {@link io.flexlink.Registration}: NCCL registers the buffer too where it is the primary path. */
    @Override
    public AutoCloseable registerBuffer(int r, long address, long bytes) {
        return comms[r].register(address, bytes);
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
    void collective(int r, CallSpec c, long send, long recv, RuntimeStream s) {
        Communicator comm = comms[r];
        long n = c.shape.count;
        switch (c.collective.collective()) {
            case ALL_REDUCE: comm.allReduce(send, recv, n, c.type, reduction(r, c), s); break;
            case ALL_GATHER: comm.allGather(send, recv, n, c.type, s); break;
            case REDUCE_SCATTER: comm.reduceScatter(send, recv, n, c.type, reduction(r, c), s); break;
            case BROADCAST: comm.broadcast(send, recv, n, c.type, c.root, s); break;
            case REDUCE: comm.reduce(send, recv, n, c.type, reduction(r, c), c.root, s); break;
            case ALL_TO_ALL: comm.allToAll(send, recv, n, c.type, s); break;
            case GATHER: comm.gather(send, recv, n, c.type, c.root, s); break;
            case SCATTER: comm.scatter(send, recv, n, c.type, c.root, s); break;
            default: throw new IllegalStateException(c.collective + " is no collective call");
        }
    }

    @Override
    void exchange(int r, PeerOps ops, DataType type, RuntimeStream s) {
        Communicator comm = comms[r];
        int sz = type.size();
        FlexLink.groupStart();
        try {
            for (int i = 0; i < ops.size(); i++) {
                if (ops.isSend(i)) {
                    comm.send(ops.address(i), ops.bytes(i) / sz, type, ops.peer(i), s);
                } else {
                    comm.recv(ops.address(i), ops.bytes(i) / sz, type, ops.peer(i), s);
                }
            }
        } finally {
            FlexLink.groupEnd();
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
        for (PreMulSum[] ops : preMulSums) {
            for (PreMulSum op : ops) {
                if (op != null) {
                    op.close();
                }
            }
        }
        for (Communicator c : comms) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // best effort
            }
        }
    }
}
