package io.flexlink.hier;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Emulated nodes for the point-to-point tests: a hierarchical communicator per rank (threads with their
 * own {@code flexlink.nodeId}, TCP rails), a stream, an input of seeded int32 values and a poisoned output
 * per rank, a thread per rank to make each rank's calls at the same time as the others', and the same
 * ranks as one single-node communicator for comparison.
 */
final class TransferRig implements AutoCloseable {
    static final int POISON = 0xA5A5A5A5;

    final HostBackend backend;
    final Communicator[] comms;
    final RuntimeStream[] streams;
    final DeviceMemory[] in;
    final DeviceMemory[] out;
    final int n;
    final long elems;
    final long seed;
    /** Rank r's node. */
    final int[] nodeOf;
    private final ExecutorService pool;

    TransferRig(FlexLinkConfig config, int nodes, int perNode, boolean roundRobin, long elems, long seed)
            throws Exception {
        this.backend = new HostBackend(config);
        this.comms = HierarchyThreadsTest.make(backend, config, nodes, perNode, roundRobin);
        this.n = comms.length;
        this.elems = elems;
        this.seed = seed;
        this.nodeOf = new int[n];
        for (int r = 0; r < n; r++) {
            nodeOf[r] = roundRobin ? r % nodes : r / perNode;
        }
        this.streams = new RuntimeStream[n];
        this.in = new DeviceMemory[n];
        this.out = new DeviceMemory[n];
        for (int r = 0; r < n; r++) {
            int device = comms[r].device();
            streams[r] = backend.createStream(device, "p2p.r" + r);
            in[r] = backend.allocate(device, 4 * elems);
            out[r] = backend.allocate(device, 4 * elems);
            ByteBuffer b = host(elems);
            for (long i = 0; i < elems; i++) {
                b.putInt((int) (4 * i), value(r, i));
            }
            backend.upload(in[r].address(), b);
        }
        this.pool = Executors.newFixedThreadPool(n);
    }

    /** Element {@code i} of rank {@code r}'s input: seeded, different for every rank, element and seed. */
    int value(int r, long i) {
        long x = (seed * 0x9E3779B97F4A7C15L) ^ (r * 0xC2B2AE3D27D4EB4FL) ^ (i * 0x165667B19E3779F9L);
        x ^= x >>> 29;
        x *= 0xBF58476D1CE4E5B9L;
        return (int) (x ^ (x >>> 32));
    }

    void poison() {
        for (int r = 0; r < n; r++) {
            backend.fill(out[r].address(), 4 * elems, (byte) 0xA5);
        }
    }

    int[] output(int r) {
        ByteBuffer b = host(elems);
        backend.download(b, out[r].address());
        int[] v = new int[(int) elems];
        b.asIntBuffer().get(v);
        return v;
    }

    static ByteBuffer host(long ints) {
        return ByteBuffer.allocateDirect((int) (4 * ints)).order(ByteOrder.nativeOrder());
    }

    /** One rank's calls. */
    interface RankCalls {
        void run(int rank) throws Exception;
    }

    /** Runs every rank's calls on its own thread, all at once, then waits for every stream. */
    void onEveryRank(RankCalls calls) throws Exception {
        List<Throwable> failures = attempt(calls);
        for (Throwable t : failures) {
            if (t != null) {
                throw new AssertionError("a rank failed: " + t, t);
            }
        }
        for (RuntimeStream s : streams) {
            s.synchronize();
        }
    }

    /** Runs every rank's calls at once and returns what each threw (null where nothing). */
    List<Throwable> attempt(RankCalls calls) throws Exception {
        List<Future<?>> fs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            fs.add(pool.submit(() -> {
                calls.run(rank);
                return null;
            }));
        }
        List<Throwable> failures = new ArrayList<>();
        for (Future<?> f : fs) {
            try {
                f.get(120, TimeUnit.SECONDS);
                failures.add(null);
            } catch (ExecutionException e) {
                failures.add(e.getCause());
            }
        }
        return failures;
    }

    /** Payload bytes rank {@code r}'s rail has read from the network so far. */
    long railBytes(int r) {
        return comms[r].stats().hierarchy().railBytesReceived();
    }

    /** Bytes of rank {@code r}'s stage {@code name} so far ({@code intra.pre}, {@code inter}, {@code intra.post}). */
    long stageBytes(int r, String name) {
        CommStats.Hierarchy h = comms[r].stats().hierarchy();
        return h.stages().stream().filter(s -> s.path().equals(name)).mapToLong(CommStats.PathTotals::bytes).sum();
    }

    /** The same ranks as one single-node communicator on the same backend (one thread drives it). */
    Communicator[] flat(FlexLinkConfig config) {
        int[] devices = new int[n];
        for (int r = 0; r < n; r++) {
            devices[r] = comms[r].device();
        }
        return FlexLink.initAll(backend, config, devices);
    }

    @Override
    public void close() {
        pool.shutdown();
        for (int r = 0; r < n; r++) {
            comms[r].close();
            streams[r].close();
            in[r].close();
            out[r].close();
        }
        backend.close();
    }
}
