package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * What every rank needs to run and time collectives, driven from one thread: a stream, a send and a
 * receive buffer of the sweep's largest size, and a pair of timing events. Shared by the FlexLink
 * communicators and the baseline's, which run one after the other on the same devices.
 */
final class Workspace implements AutoCloseable {
    private final Backend backend;
    private final int ranks;
    private final RuntimeStream[] streams;
    private final DeviceMemory[] send;
    private final DeviceMemory[] recv;
    private final RuntimeEvent[] start;
    private final RuntimeEvent[] stop;
    private final long[] sendAddr;
    private final long[] recvAddr;
    /** The communicator rank of local rank 0, and the communicator's size (other processes hold the rest). */
    private final int firstRank;
    private final int worldSize;

    Workspace(Backend backend, int[] devices, long bufferBytes) {
        this(backend, devices, bufferBytes, 0, devices.length);
    }

    /** Local rank {@code i} is rank {@code firstRank + i} of a {@code worldSize}-rank communicator. */
    Workspace(Backend backend, int[] devices, long bufferBytes, int firstRank, int worldSize) {
        this.backend = backend;
        this.firstRank = firstRank;
        this.worldSize = worldSize;
        this.ranks = devices.length;
        streams = new RuntimeStream[ranks];
        send = new DeviceMemory[ranks];
        recv = new DeviceMemory[ranks];
        start = new RuntimeEvent[ranks];
        stop = new RuntimeEvent[ranks];
        sendAddr = new long[ranks];
        recvAddr = new long[ranks];
        long bytes = Math.max(bufferBytes, 64);
        try {
            for (int r = 0; r < ranks; r++) {
                streams[r] = backend.createStream(devices[r], "perf.r" + r);
                send[r] = backend.allocate(devices[r], bytes);
                recv[r] = backend.allocate(devices[r], bytes);
                // defined contents for the timed runs (no NaN or denormal slow paths)
                backend.fill(send[r].address(), bytes, (byte) 0);
                backend.fill(recv[r].address(), bytes, (byte) 0);
                start[r] = backend.createEvent(devices[r], true);
                stop[r] = backend.createEvent(devices[r], true);
            }
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** Ranks driven by this process. */
    int ranks() {
        return ranks;
    }

    /** The communicator rank of local rank {@code local}. */
    int globalRank(int local) {
        return firstRank + local;
    }

    /** Ranks of the communicator, in every process. */
    int worldSize() {
        return worldSize;
    }

    Backend backend() {
        return backend;
    }

    /**
     * Sets the send and receive address of every rank for a call: separate buffers out of place; NCCL's
     * in-place layouts in the receive buffer otherwise (AllGather sends from {@code recv + rank * count},
     * ReduceScatter receives into {@code send + rank * count}).
     */
    void layout(Collective c, long count, DataType type, boolean inPlace) {
        long sz = type.size();
        for (int r = 0; r < ranks; r++) {
            if (!inPlace) {
                sendAddr[r] = send[r].address();
                recvAddr[r] = recv[r].address();
                continue;
            }
            long base = recv[r].address();
            switch (c) {
                case ALL_GATHER:
                    recvAddr[r] = base;
                    sendAddr[r] = base + globalRank(r) * count * sz;
                    break;
                case REDUCE_SCATTER:
                    sendAddr[r] = base;
                    recvAddr[r] = base + globalRank(r) * count * sz;
                    break;
                default:
                    sendAddr[r] = base;
                    recvAddr[r] = base;
            }
        }
    }

    long sendAddress(int rank) {
        return sendAddr[rank];
    }

    long recvAddress(int rank) {
        return recvAddr[rank];
    }

    /** Enqueues one call on every rank, as one group (as nccl-tests does when a thread drives several GPUs). */
    void enqueue(Communicator[] comms, Collective c, long count, DataType type, ReduceOp op, int root) {
        boolean group = comms.length > 1;
        if (group) {
            FlexLink.groupStart();
        }
        try {
            for (int r = 0; r < comms.length; r++) {
                call(comms[r], c, sendAddr[r], recvAddr[r], count, type, op, root, streams[r]);
            }
        } finally {
            if (group) {
                FlexLink.groupEnd();
            }
        }
    }

    static void call(Communicator comm, Collective c, long send, long recv, long count, DataType type, ReduceOp op,
                     int root, RuntimeStream stream) {
        switch (c) {
            case ALL_REDUCE: comm.allReduce(send, recv, count, type, op, stream); break;
            case ALL_GATHER: comm.allGather(send, recv, count, type, stream); break;
            case REDUCE_SCATTER: comm.reduceScatter(send, recv, count, type, op, stream); break;
            case BROADCAST: comm.broadcast(send, recv, count, type, root, stream); break;
            default: comm.reduce(send, recv, count, type, op, root, stream);
        }
    }

    /** Waits for every rank's stream; throws the first failure of their work. */
    void synchronize() {
        for (RuntimeStream s : streams) {
            s.synchronize();
        }
    }

    /** Runs {@code iters} untimed calls and waits for them. */
    void warm(Communicator[] comms, Collective c, long count, DataType type, ReduceOp op, int root, int iters) {
        for (int i = 0; i < iters; i++) {
            enqueue(comms, c, count, type, op, root);
        }
        synchronize();
    }

    /**
     * Times {@code iters} calls: a timing event on every rank's stream before and after them, and the
     * average time of one call is the longest rank's elapsed time divided by {@code iters}, in seconds.
     */
    double time(Communicator[] comms, Collective c, long count, DataType type, ReduceOp op, int root, int iters,
                boolean blocking) {
        for (int r = 0; r < ranks; r++) {
            streams[r].record(start[r]);
        }
        for (int i = 0; i < iters; i++) {
            enqueue(comms, c, count, type, op, root);
            if (blocking) {
                synchronize();
            }
        }
        for (int r = 0; r < ranks; r++) {
            streams[r].record(stop[r]);
        }
        synchronize();
        double maxMs = 0;
        for (int r = 0; r < ranks; r++) {
            stop[r].synchronize();
            maxMs = Math.max(maxMs, stop[r].elapsedMillis(start[r]));
        }
        return maxMs / 1e3 / iters;
    }

    @Override
    public void close() {
        for (int r = 0; r < ranks; r++) {
            if (streams[r] != null) {
                try {
                    streams[r].synchronize();
                } catch (RuntimeException e) {
                    // already reported by the run
                }
                streams[r].close();
            }
            closeQuietly(send[r]);
            closeQuietly(recv[r]);
            closeQuietly(start[r]);
            closeQuietly(stop[r]);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // nothing more to do
            }
        }
    }
}
