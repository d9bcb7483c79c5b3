package io.flexlink.testing;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs one collective on every rank of a set of communicators driven by this thread, on inputs from
 * {@link DataPattern}, and checks every output element of every rank against {@link Expected}. Outputs are
 * poisoned first with the complement of the expected value, so an element nobody wrote can never pass.
 * Used by the host-backend tests and, through the test jar, by the GPU tests.
 */
public final class CollectiveHarness implements AutoCloseable {
    private final Backend backend;
    private final Communicator[] comms;
    private final RuntimeStream[] streams;
    private final DeviceMemory[] a;
    private final DeviceMemory[] b;
    private ByteBuffer host = ByteBuffer.allocateDirect(0);
    private boolean grouped;

    public CollectiveHarness(Backend backend, Communicator[] comms) {
        this.backend = backend;
        this.comms = comms;
        int n = comms.length;
        this.streams = new RuntimeStream[n];
        this.a = new DeviceMemory[n];
        this.b = new DeviceMemory[n];
        for (int r = 0; r < n; r++) {
            streams[r] = backend.createStream(comms[r].device(), "user.r" + r);
        }
    }

    /** From now on every rank's call of a run goes into one group ({@code groupStart}, the calls, {@code groupEnd}). */
    public CollectiveHarness grouped() {
        this.grouped = true;
        return this;
    }

    public RuntimeStream stream(int rank) {
        return streams[rank];
    }

    /** What one run found. */
    public static final class Outcome {
        public final long wrong;
        public final List<String> firstErrors;
        /** Bytes each path carried in this run, summed over the ranks, by path name (stats()). */
        public final java.util.Map<String, Long> pathBytes;

        Outcome(long wrong, List<String> firstErrors, java.util.Map<String, Long> pathBytes) {
            this.wrong = wrong;
            this.firstErrors = firstErrors;
            this.pathBytes = pathBytes;
        }

        /** Bytes the named path carried in this run, over all ranks (0 when the communicator has no such path). */
        public long bytes(String path) {
            return pathBytes.getOrDefault(path, 0L);
        }

        @Override
        public String toString() {
            return wrong + " wrong" + (firstErrors.isEmpty() ? "" : ": " + firstErrors) + ", bytes per path " + pathBytes;
        }
    }

    /** Bytes per path name summed over every rank, so far. */
    private java.util.Map<String, Long> pathBytes() {
        java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
        for (Communicator comm : comms) {
            for (io.flexlink.CommStats.PathTotals t : comm.stats().paths()) {
                m.merge(t.path(), t.bytes(), Long::sum);
            }
        }
        return m;
    }

    private DeviceMemory ensure(DeviceMemory[] pool, int r, long bytes) {
        if (pool[r] == null || pool[r].byteSize() < bytes) {
            if (pool[r] != null) {
                pool[r].close();
            }
            pool[r] = backend.allocate(comms[r].device(), Math.max(bytes, 64));
        }
        return pool[r];
    }

    private ByteBuffer host(long bytes) {
        if (host.capacity() < bytes) {
            host = ByteBuffer.allocateDirect((int) Math.max(bytes, 1)).order(ByteOrder.nativeOrder());
        }
        host.clear().limit((int) bytes);
        return host;
    }

    /** Runs {@code c} on all ranks, synchronizes, and checks. {@code count} is the per-rank count NCCL takes. */
    public Outcome run(Collective c, DataType type, ReduceOp op, long count, int root, boolean inPlace, long seed) {
        int n = comms.length;
        int sz = type.size();
        ReduceOp dataOp = DataPattern.dataOp(c, op);
        long inElems = Expected.inputCount(c, count, n);
        long outElems = Expected.outputCount(c, count, n);
        long[] send = new long[n];
        long[] recv = new long[n];
        for (int r = 0; r < n; r++) {
            if (inPlace) {
                long span = Math.max(inElems, outElems) * sz;
                long base = ensure(a, r, span).address();
                switch (c) {
                    case ALL_GATHER: recv[r] = base; send[r] = base + (long) r * count * sz; break;
                    case REDUCE_SCATTER: send[r] = base; recv[r] = base + (long) r * count * sz; break;
                    case GATHER: // in place on the root only: the others have no receive buffer
                        recv[r] = base;
                        send[r] = r == root ? base + (long) r * count * sz : ensure(b, r, count * sz).address();
                        break;
                    case SCATTER:
                        send[r] = base;
                        recv[r] = r == root ? base + (long) r * count * sz : ensure(b, r, count * sz).address();
                        break;
                    default: send[r] = base; recv[r] = base;
                }
            } else {
                send[r] = ensure(a, r, inElems * sz).address();
                recv[r] = ensure(b, r, outElems * sz).address();
            }
            // poison the output, then write the input (which may overlap it when in place)
            ByteBuffer out = host(outElems * sz);
            for (long i = 0; i < outElems; i++) {
                DataPattern.put(out, type, ~Expected.output(c, type, op, seed, n, r, root, count, i));
            }
            out.flip();
            backend.upload(recv[r], out);
            if (Expected.reads(c, r, root) || inPlace) {
                ByteBuffer in = host(inElems * sz);
                DataPattern.fill(in, type, dataOp, seed, n, r, 0, inElems);
                backend.upload(send[r], in);
            }
        }
        java.util.Map<String, Long> before = pathBytes();
        if (grouped) {
            io.flexlink.FlexLink.groupStart();
        }
        try {
            for (int r = 0; r < n; r++) {
                enqueue(c, comms[r], send[r], recv[r], count, type, op, root, streams[r]);
            }
        } finally {
            if (grouped) {
                io.flexlink.FlexLink.groupEnd();
            }
        }
        for (int r = 0; r < n; r++) {
            streams[r].synchronize();
        }
        long wrong = 0;
        List<String> errors = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            ByteBuffer out = host(outElems * sz);
            backend.download(out, recv[r]);
            boolean written = Expected.writes(c, r, root);
            for (long i = 0; i < outElems; i++) {
                long want = Expected.output(c, type, op, seed, n, r, root, count, i);
                if (!written) {
                    // Reduce and Gather leave non-root outputs alone: still the poison, or the input when the
                    // buffers are one (Reduce in place; a non-root Gather has no receive buffer to share)
                    boolean aliased = inPlace && c == Collective.REDUCE;
                    want = aliased ? DataPattern.value(type, dataOp, seed, n, r, i) : ~want;
                }
                want &= DataPattern.mask(type);
                long got = DataPattern.get(out, type, i);
                if (got != want) {
                    wrong++;
                    if (errors.size() < 5) {
                        errors.add("rank " + r + " [" + i + "] = 0x" + Long.toHexString(got)
                                + ", expected 0x" + Long.toHexString(want));
                    }
                }
            }
        }
        java.util.Map<String, Long> carried = pathBytes();
        carried.replaceAll((path, bytes) -> bytes - before.getOrDefault(path, 0L));
        return new Outcome(wrong, errors, carried);
    }

    /** Enqueues one rank's call through the address overloads. */
    public static void enqueue(Collective c, Communicator comm, long send, long recv, long count, DataType type,
                               ReduceOp op, int root, RuntimeStream stream) {
        switch (c) {
            case ALL_REDUCE: comm.allReduce(send, recv, count, type, op, stream); break;
            case ALL_GATHER: comm.allGather(send, recv, count, type, stream); break;
            case REDUCE_SCATTER: comm.reduceScatter(send, recv, count, type, op, stream); break;
            case BROADCAST: comm.broadcast(send, recv, count, type, root, stream); break;
            case ALL_TO_ALL: comm.allToAll(send, recv, count, type, stream); break;
            case GATHER: comm.gather(send, recv, count, type, root, stream); break;
            case SCATTER: comm.scatter(send, recv, count, type, root, stream); break;
            case REDUCE: comm.reduce(send, recv, count, type, op, root, stream); break;
            default: throw new IllegalArgumentException("not a collective: " + c);
        }
    }


    @Override
    public void close() {
        for (RuntimeStream s : streams) {
            s.synchronize();
            s.close();
        }
        for (DeviceMemory m : a) {
            if (m != null) {
                m.close();
            }
        }
        for (DeviceMemory m : b) {
            if (m != null) {
                m.close();
            }
        }
        Arrays.fill(a, null);
        Arrays.fill(b, null);
    }
}
