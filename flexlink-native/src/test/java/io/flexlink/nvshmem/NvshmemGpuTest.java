package io.flexlink.nvshmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.comm.FlexCommunicator;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.cuda.CudaBackendProvider;
import io.flexlink.cuda.CudaStream;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.verify.DataPattern;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * NVSHMEM on one GPU, one PE: initialization by unique id, symmetric allocation, a put-with-signal to
 * itself checked on random data, and one-rank collectives carried half by the NVSHMEM path (loopback
 * through its own symmetric slots and signals). Skips, saying why, where CUDA or NVSHMEM is missing or
 * NVSHMEM does not initialize (try NVSHMEM_DEBUG=INFO for its own account).
 */
@Tag("gpu")
class NvshmemGpuTest {
    static CudaBackend backend;
    static NvshmemSession session;

    @BeforeAll
    static void initialize() {
        String cuda = new CudaBackendProvider().unavailableReason();
        assumeTrue(cuda == null, () -> "no CUDA backend here: " + cuda);
        FlexLinkConfig config = FlexLinkConfig.fromEnvironment();
        String lib = NvshmemLibrary.open(config.nvshmemLibrary());
        if (lib != null) {
            System.out.println("NvshmemGpuTest skipped: " + lib);
        }
        assumeTrue(lib == null, () -> "no NVSHMEM here: " + lib);
        backend = CudaBackend.open(config);
        session = NvshmemSession.current();
        if (session == null) {
            String broken = NvshmemSession.broken();
            assumeTrue(broken == null, () -> broken);
            byte[] uid = new byte[NvshmemNative.flexlink_nvshmem_uniqueid_bytes()];
            int rc = NvshmemNative.flexlink_nvshmem_get_uniqueid(uid);
            String why = "nvshmemx_get_uniqueid: " + NvshmemLibrary.lastError() + " (" + rc + ")";
            if (rc != 0) {
                System.out.println("NvshmemGpuTest skipped: " + why);
            }
            assumeTrue(rc == 0, why);
            try {
                session = NvshmemSession.initialize(uid, 0, 1, 0, 42, Duration.ofSeconds(120));
            } catch (FlexLinkException e) {
                System.out.println("NvshmemGpuTest skipped: NVSHMEM did not initialize: " + e.getMessage());
                assumeTrue(false, "NVSHMEM did not initialize: " + e.getMessage());
            }
        }
        assumeTrue(session.pes() == 1 && session.device() == 0, () -> "NVSHMEM already runs here as " + session);
        System.out.println("NvshmemGpuTest: NVSHMEM " + NvshmemLibrary.versionText(NvshmemLibrary.version())
                + ", " + session);
    }

    @AfterAll
    static void close() {
        if (backend != null) {
            backend.close();
        }
    }

    @Test
    void initializedAsOnePe() {
        assertEquals(3, NvshmemLibrary.version() / 10000);
        assertEquals(0, NvshmemNative.flexlink_nvshmem_my_pe());
        assertEquals(1, NvshmemNative.flexlink_nvshmem_n_pes());
        assertTrue(NvshmemNative.flexlink_nvshmem_init_status() >= 2, "nvshmemx_init_status");
    }

    @Test
    void symmetricMemoryIsAllocatedAndUsable() {
        SymmetricBuffer b;
        synchronized (session) {
            b = session.allocate(4 << 20);
        }
        assertNotNull(b, "nvshmem_malloc(4 MiB)");
        assertTrue(b.address() != 0);
        backend.fill(b.address(), b.byteSize(), (byte) 0x5a);
        ByteBuffer out = ByteBuffer.allocateDirect(4096);
        backend.download(out, b.address() + b.byteSize() - 4096);
        for (int i = 0; i < 4096; i++) {
            assertEquals(0x5a, out.get(i));
        }
        b.close();
        b.close(); // idempotent
        synchronized (session) {
            session.free(List.of(b.id()));
        }
    }

    @Test
    void putWithSignalToItselfDeliversRandomData() {
        long bytes = 3 << 20;
        SymmetricBuffer sym;
        synchronized (session) {
            // the source is symmetric too, as in NvshmemPath (remote transports cannot read unregistered memory)
            sym = session.allocate(256 + 2 * bytes);
        }
        assertNotNull(sym);
        long src = sym.address() + 256 + bytes;
        CudaStream stream = (CudaStream) backend.createStream(0, "nvshmem.test");
        try {
            long count = bytes / 4;
            ByteBuffer data = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
            DataPattern.fill(data, DataType.FLOAT32, ReduceOp.SUM, 1234, 1, 0, 0, count);
            // fill writes through a duplicate: data still has position 0 and limit = capacity
            backend.upload(src, data);
            backend.fill(sym.address(), 256 + bytes, (byte) 0);
            long signal = sym.address();
            // rounds 1 and 2 add 1 to the signal (NVSHMEM_SIGNAL_ADD), round 3 sets it to 7 (NVSHMEM_SIGNAL_SET)
            for (int round = 1; round <= 3; round++) {
                long expected = round < 3 ? round : 7;
                backend.fill(sym.address() + 256, bytes, (byte) 0);
                NvshmemNative.flexlink_nvshmem_putmem_signal_on_stream(sym.address() + 256, src, bytes,
                        signal, round < 3 ? 1 : 7, round < 3 ? NvshmemLibrary.signalAdd() : NvshmemLibrary.signalSet(),
                        0, stream.address());
                NvshmemNative.flexlink_nvshmem_signal_wait_until_on_stream(signal, NvshmemLibrary.cmpGe(), expected,
                        stream.address());
                NvshmemNative.flexlink_nvshmem_quiet_on_stream(stream.address());
                stream.synchronize();
                ByteBuffer got = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
                backend.download(got, sym.address() + 256);
                long wrong = 0;
                long first = -1;
                for (long i = 0; i < count; i++) {
                    if (DataPattern.value(DataType.FLOAT32, ReduceOp.SUM, 1234, 1, 0, i) != DataPattern.get(got, DataType.FLOAT32, i)) {
                        wrong++;
                        first = first < 0 ? i : first;
                    }
                }
                assertEquals(0, wrong, "round " + round + ": " + wrong + " of " + count + " elements wrong, first at " + first);
                ByteBuffer sig = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
                backend.download(sig, signal);
                assertEquals(expected, sig.getLong(0), "signal after put " + round);
            }
        } finally {
            stream.close();
            sym.close();
        }
    }

    @Test
    void oneRankCollectivesRideTheNvshmemPath() {
        FlexLinkConfig config = FlexLinkConfig.builder()
                .set(FlexLinkConfig.PATHS, "primary,nvshmem")
                .set(FlexLinkConfig.SHARE, "nvshmem=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "256K")
                .set(FlexLinkConfig.SLOTS, "2")
                .build();
        for (int pass = 0; pass < 2; pass++) { // the second communicator reuses the session and its freed buffer
            Communicator comm = FlexLink.initAll(backend, config, 0)[0];
            try (CollectiveHarness h = new CollectiveHarness(backend, new Communicator[] {comm})) {
                assertEquals(List.of("primary", "nvshmem"), io.flexlink.testing.Paths.names(comm));
                long seed = 100 + pass * 10;
                for (long count : new long[] {1, 1000, 3_000_001}) {
                    for (Collective c : Collective.collectives()) {
                        CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, count, 0, false, seed++);
                        assertEquals(0, o.wrong, c + " count " + count + ": " + o);
                        o = h.run(c, DataType.BFLOAT16, ReduceOp.AVG, count, 0, true, seed++);
                        assertEquals(0, o.wrong, c + " in place, count " + count + ": " + o);
                    }
                }
                long carried = 0;
                for (CommStats.PathTotals t : comm.stats().paths()) {
                    if (t.path().equals("nvshmem")) {
                        carried = t.bytes();
                    }
                }
                assertTrue(carried > 0, "the nvshmem path carried bytes: " + comm.stats());
            } finally {
                comm.close();
            }
        }
    }

    /**
     * NVSHMEM's signals count up across calls, so a graph cannot capture its part: a captured call gives the
     * NVSHMEM share to the paths that can be captured (the primary here), says so once per communicator, and
     * every replay is right. An eager call after the captures still uses the NVSHMEM path.
     */
    @Test
    void aCapturedCallLeavesTheNvshmemPathOutSaysSoOnceAndReplaysRight() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,nvshmem")
                .set(FlexLinkConfig.SHARE, "nvshmem=0.5").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        long count = 1_000_003;
        Communicator comm = FlexLink.initAll(backend, config, 0)[0];
        CudaStream stream = (CudaStream) backend.createStream(0, "nvshmem.graph");
        DeviceMemory in = backend.allocate(0, 4 * count);
        DeviceMemory out = backend.allocate(0, 4 * count);
        java.io.PrintStream err = System.err;
        java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
        io.flexlink.runtime.RuntimeGraph[] graphs = new io.flexlink.runtime.RuntimeGraph[2];
        long[] before = bytes(comm);
        try {
            System.setErr(new java.io.PrintStream(said, true));
            for (int g = 0; g < graphs.length; g++) {
                stream.beginCapture();
                comm.allReduce(in.address(), out.address(), count, DataType.FLOAT32, ReduceOp.SUM, stream);
                graphs[g] = stream.endCapture();
            }
        } finally {
            System.setErr(err);
        }
        try {
            long[] captured = bytes(comm);
            assertEquals(before[1], captured[1], "the captured calls put nothing on the NVSHMEM path");
            assertEquals(before[0] + 2 * 4 * count, captured[0], "the primary path took the whole of both calls");
            long lines = said.toString().lines().filter(l -> l.contains("nvshmem cannot be captured")).count();
            // the line is at INFO: a classpath whose logging configuration hides INFO (flexlink-perf's) shows none,
            // so run with -Dorg.slf4j.simpleLogger.log.io.flexlink.launch.Launcher=info to see it counted
            boolean shown = org.slf4j.LoggerFactory.getLogger(io.flexlink.launch.Launcher.class).isInfoEnabled();
            assertEquals(shown ? 1 : 0, lines, "lines saying that NVSHMEM cannot be captured (INFO "
                    + (shown ? "shown" : "hidden") + "): " + said);
            ByteBuffer data = ByteBuffer.allocateDirect((int) (4 * count)).order(ByteOrder.nativeOrder());
            ByteBuffer got = ByteBuffer.allocateDirect((int) (4 * count)).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 40; i++) {
                long seed = 500 + i;
                DataPattern.fill(data, DataType.FLOAT32, ReduceOp.SUM, seed, 1, 0, 0, count);
                backend.upload(in.address(), data.duplicate());
                backend.fill(out.address(), 4 * count, (byte) 0xA5);
                graphs[i % 2].launch(stream);
                stream.synchronize();
                backend.download(got.duplicate(), out.address());
                assertEquals(-1, got.duplicate().mismatch(data.duplicate()), "replay " + i + " of graph " + (i % 2));
            }
            comm.allReduce(in.address(), out.address(), count, DataType.FLOAT32, ReduceOp.SUM, stream);
            stream.synchronize();
            assertTrue(bytes(comm)[1] > captured[1], "an eager call still uses the NVSHMEM path");
        } finally {
            for (io.flexlink.runtime.RuntimeGraph g : graphs) {
                if (g != null) {
                    g.close();
                }
            }
            comm.close();
            in.close();
            out.close();
            stream.close();
        }
    }

    /** Bytes carried so far: the primary path's, then the NVSHMEM path's. */
    private static long[] bytes(Communicator comm) {
        long[] b = new long[2];
        for (CommStats.PathTotals t : comm.stats().paths()) {
            b[t.path().equals("nvshmem") ? 1 : 0] += t.bytes();
        }
        return b;
    }
}
