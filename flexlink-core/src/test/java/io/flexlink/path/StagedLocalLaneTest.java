package io.flexlink.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.PathStreams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The staged paths' local lane, for the work that stays on the device: a reduction of several chunks runs
 * there, so that the receive lane's copies go on meanwhile (a call of one chunk reduces on the receive lane),
 * and a rank's own block is copied there. The rows a reduction reads alternate between two sets; a local lane
 * held back on every reduction must still find its rows intact, in one call and from one call to the next on
 * another stream.
 */
class StagedLocalLaneTest {
    private static FlexLinkConfig config() {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "16K").set(FlexLinkConfig.SLOTS, "4")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    /** Calls of {@code method} per path stream of rank 0 in one {@code c} of {@code count} int32 (2 ranks, device 0). */
    private static Map<String, Long> callsByStream(Collective c, long count, String method) {
        return callsByStream(c, count, method, 0, 0);
    }

    /** The same on ranks of the given devices. */
    private static Map<String, Long> callsByStream(Collective c, long count, String method, int... devices) {
        FlexLinkConfig config = config();
        try (HostBackend host = new HostBackend(config)) {
            PathStreams traced = new PathStreams(host, PathStreams.Mode.COUNT);
            Map<String, Long> byStream = new ConcurrentHashMap<>();
            traced.listen((label, m, a) -> {
                if (label.endsWith(".r0") && m.getName().equals(method)) {
                    byStream.merge(label, 1L, Long::sum);
                }
            });
            Communicator[] comms = FlexLink.initAll(traced, config, devices);
            try (CollectiveHarness h = new CollectiveHarness(host, comms)) {
                CollectiveHarness.Outcome o = h.run(c, DataType.INT32, ReduceOp.SUM, count, 0, false, 3);
                assertEquals(0, o.wrong, o.toString());
                assertTrue(o.bytes("pcie") > 0, o.toString());
            } finally {
                for (Communicator comm : comms) {
                    comm.close();
                }
            }
            return byStream;
        }
    }

    @Test
    void aCallOfSeveralChunksReducesOnTheLocalLaneAndCopiesOnTheReceiveLane() {
        // 200 KB per owner: many 16K chunks
        Map<String, Long> reductions = callsByStream(Collective.ALL_REDUCE, 100_000, "reduceRows");
        Long chunks = reductions.get("pcie.local.r0");
        assertTrue(chunks != null && chunks > 4, "the local lane reduces: " + reductions);
        assertEquals(1, reductions.size(), "nowhere else: " + reductions);
        // two ranks: a contribution and a result per chunk, each one copy out of the staging area
        Map<String, Long> copies = callsByStream(Collective.ALL_REDUCE, 100_000, "copyRowsFromHost");
        assertEquals(Map.of("pcie.recv.r0", 2 * chunks), copies, "a producer's items in order, on one lane");
    }

    @Test
    void aCallOfOneChunkReducesOnTheReceiveLane() {
        Map<String, Long> byStream = callsByStream(Collective.ALL_REDUCE, 2_000, "reduceRows"); // one chunk
        assertEquals(Map.of("pcie.recv.r0", 1L), byStream, "one reduction, behind its copies");
    }

    @Test
    void twoSlotsPerProducerStillCarryContributionsAndResultsInTurn() {
        // a contribution and the result before it share a slot's handshake word: one lane must take both, in order
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 0);
            assertTimeoutPreemptively(Duration.ofMinutes(1), () -> {
                try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                    for (int i = 0; i < 6; i++) {
                        CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM,
                                4_000 + 1_000L * i, 0, false, i);
                        assertEquals(0, o.wrong, "call " + i + ": " + o);
                    }
                }
            });
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    @Test
    void threeRanksOnOneDeviceKeepTheirWorkOnTheReceiveLane() {
        // nine path streams and the callers' would pass a device's 8 hardware queues: no local stream
        Map<String, Long> reductions = callsByStream(Collective.ALL_REDUCE, 100_000, "reduceRows", 0, 0, 0);
        assertTrue(reductions.getOrDefault("pcie.recv.r0", 0L) > 4 && reductions.size() == 1,
                "reduced on the receive lane: " + reductions);
        Map<String, Long> own = callsByStream(Collective.ALL_GATHER, 20_000, "copy", 0, 0, 0);
        assertEquals(1L, own.get("pcie.recv.r0"), "the own block on the receive lane: " + own);
        // three ranks on three devices: a local stream each
        Map<String, Long> spread = callsByStream(Collective.ALL_REDUCE, 100_000, "reduceRows", 0, 1, 2);
        assertTrue(spread.getOrDefault("pcie.local.r0", 0L) > 4 && spread.size() == 1, "spread: " + spread);
    }

    @Test
    void aRanksOwnBlockIsCopiedOnTheLocalLane() {
        for (Collective c : new Collective[] {Collective.ALL_GATHER, Collective.ALL_TO_ALL}) {
            Map<String, Long> byStream = callsByStream(c, 20_000, "copy");
            assertEquals(1L, byStream.get("pcie.local.r0"), c + ": the own block, one copy: " + byStream);
            assertEquals(null, byStream.get("pcie.recv.r0"), c + ": none on the receive lane: " + byStream);
        }
    }

    @Test
    void aSlowLocalLaneFindsItsRowsIntactWithinACall() {
        FlexLinkConfig config = config();
        AtomicLong held = new AtomicLong();
        // every reduction waits 0.3 ms: without their ordering, the receive lane would refill the rows under it
        HostFaults slowReductions = (stream, op) -> {
            if (op == HostFaults.Op.REDUCE && stream.startsWith("pcie.local")) {
                held.incrementAndGet();
                LockSupport.parkNanos(300_000);
            }
            return HostFaults.Action.RUN;
        };
        Collective[] kinds = {Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.REDUCE};
        try (HostBackend backend = new HostBackend(config, slowReductions)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2); // a device each: a local stream each
            assertTimeoutPreemptively(Duration.ofMinutes(2), () -> {
                try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                    for (int i = 0; i < 12; i++) {
                        Collective c = kinds[i % kinds.length];
                        long count = 30_000 + (i * 3_001L) % 9_000;
                        CollectiveHarness.Outcome o = h.run(c, DataType.INT32, ReduceOp.SUM, count, i % 3,
                                i % 4 == 1, i);
                        assertEquals(0, o.wrong, "call " + i + " " + c + ": " + o);
                    }
                }
            });
            for (Communicator c : comms) {
                c.close();
            }
        }
        assertTrue(held.get() > 100, "the local lanes reduced, slowly: " + held.get());
    }

    @Test
    void aCallOnAnotherStreamWaitsForThePreviousCallsLastReductionsBeforeTakingTheirRows() throws Exception {
        FlexLinkConfig config = config();
        // rank 0 reduces slowly; at two ranks nothing else holds back its receive lane, which reaches the next
        // call's first rows (the rows of this call's second last chunk) once this call's third last chunk is
        // reduced, while the second last may still read them. Three equal chunks per call (16 KiB pieces of
        // 48 KiB segments), so that the next call's first chunk fills the whole rows
        HostFaults slowRankZero = (stream, op) -> {
            if (op == HostFaults.Op.REDUCE && stream.equals("pcie.local.r0")) {
                LockSupport.parkNanos(5_000_000);
            }
            return HostFaults.Action.RUN;
        };
        int n = 2;
        int count = 24_576;
        try (HostBackend backend = new HostBackend(config, slowRankZero)) {
            Communicator[] comms = FlexLink.initAll(backend, config, new int[n]);
            DeviceMemory[][] in = new DeviceMemory[2][n];
            DeviceMemory[][] out = new DeviceMemory[2][n];
            RuntimeStream[][] streams = new RuntimeStream[2][n];
            try {
                for (int call = 0; call < 2; call++) {
                    for (int r = 0; r < n; r++) {
                        in[call][r] = backend.allocate(0, 4L * count);
                        out[call][r] = backend.allocate(0, 4L * count);
                        streams[call][r] = backend.createStream(0, "user" + call + ".r" + r);
                        int scale = r + 1;
                        int add = call + 1;
                        backend.upload(in[call][r].address(), ints(count, i -> scale * i + add));
                        backend.upload(out[call][r].address(), ints(count, i -> -1));
                    }
                }
                assertTimeoutPreemptively(Duration.ofMinutes(2), () -> {
                    for (int call = 0; call < 2; call++) { // two calls, two streams per rank, nothing between them
                        for (int r = 0; r < n; r++) {
                            comms[r].allReduce(in[call][r].address(), out[call][r].address(), count, DataType.INT32,
                                    ReduceOp.SUM, streams[call][r]);
                        }
                    }
                    for (int call = 0; call < 2; call++) {
                        for (int r = 0; r < n; r++) {
                            streams[call][r].synchronize();
                        }
                    }
                });
                for (int call = 0; call < 2; call++) {
                    for (int r = 0; r < n; r++) {
                        ByteBuffer got = ByteBuffer.allocateDirect(4 * count).order(ByteOrder.nativeOrder());
                        backend.download(got, out[call][r].address());
                        long wrong = 0;
                        for (int i = 0; i < count; i++) {
                            // the sum over the ranks of (r + 1) i + call + 1
                            wrong += got.getInt(4 * i) == n * (n + 1) / 2 * i + n * (call + 1) ? 0 : 1;
                        }
                        assertEquals(0, wrong, "call " + call + ", rank " + r);
                    }
                }
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
                for (int call = 0; call < 2; call++) {
                    for (int r = 0; r < n; r++) {
                        close(streams[call][r]);
                        close(in[call][r]);
                        close(out[call][r]);
                    }
                }
            }
        }
    }

    private static ByteBuffer ints(int count, java.util.function.IntUnaryOperator value) {
        ByteBuffer b = ByteBuffer.allocateDirect(4 * count).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++) {
            b.putInt(value.applyAsInt(i));
        }
        return b.flip();
    }

    private static void close(AutoCloseable c) throws Exception {
        if (c != null) {
            c.close();
        }
    }
}
