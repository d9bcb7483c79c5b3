package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeGraph;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.Paths;
import org.bytedeco.cuda.global.cudart;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * FlexLink collectives captured into CUDA graphs replay correctly, again and again, with new data before
 * every replay and eager calls of the same communicators in between: one rank with NCCL and the PCIe path
 * (a fixed share), and two ranks on GPU 0 (the PCIe path alone). Every element of every replay is checked.
 */
@Tag("gpu")
class GraphCaptureGpuTest {
    static final long COUNT = (1 << 18) + 3;
    static final int REPLAYS = 1000;
    static final int DATA_SETS = 4;

    @ParameterizedTest(name = "{0} ranks, share {1}")
    @CsvSource({"1, pcie=0.3", "2, auto"})
    void everyCollectiveReplaysRightAThousandTimes(int n, String share) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.SHARE, share).set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (CudaBackend backend = GpuTests.open()) {
            Communicator[] comms = FlexLink.initAll(backend, config, new int[n]);
            RuntimeStream[] streams = new RuntimeStream[n];
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(0, "graph.r" + r);
            }
            List<String> failures = new ArrayList<>();
            for (Collective c : Collective.collectives()) {
                failures.addAll(replays(backend, comms, streams, c, COUNT));
            }
            long[] bytes = Paths.bytes(comms[0]);
            assertTrue(bytes[bytes.length - 1] > 0, "the PCIe path carried data: " + Paths.names(comms[0]));
            for (int r = 0; r < n; r++) {
                comms[r].close(); // after capture: must return
                streams[r].close();
            }
            assertEquals(List.of(), failures);
        }
    }

    /**
     * A call below the split size runs on NCCL alone and skips the plan's capture question; the watchdog (on,
     * the default) must still see that the stream is being captured and record nothing into the graph.
     */
    @org.junit.jupiter.api.Test
    void aCallBelowTheSplitSizeIsCapturedWithTheWatchdogOn() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (CudaBackend backend = GpuTests.open()) {
            Communicator[] comms = FlexLink.initAll(backend, config, new int[1]);
            RuntimeStream[] streams = {backend.createStream(0, "graph.small")};
            List<String> failures = new ArrayList<>(replays(backend, comms, streams, Collective.ALL_REDUCE, 2));
            long[] bytes = Paths.bytes(comms[0]);
            assertEquals(0, bytes[bytes.length - 1], "an 8-byte call never reaches the PCIe path");
            comms[0].close();
            streams[0].close();
            assertEquals(List.of(), failures);
        }
    }

    /**
     * The application's own capture (cudaStreamBeginCapture) in each of CUDA's three modes: FlexLink never
     * makes a call that the mode forbids (a stream query, an event query or synchronization, an allocation)
     * while the stream is captured.
     */
    @ParameterizedTest(name = "{0} mode, {1} ranks, share {2}")
    @CsvSource({"global, 1, pcie=0.3", "thread-local, 1, pcie=0.3", "relaxed, 1, pcie=0.3", "thread-local, 2, auto",
            "relaxed, 2, auto", "global, 4, auto"})
    void theApplicationsCaptureInEveryModeReplaysRight(String modeName, int n, String share) {
        int mode = switch (modeName) {
            case "global" -> cudart.cudaStreamCaptureModeGlobal;
            case "thread-local" -> cudart.cudaStreamCaptureModeThreadLocal;
            default -> cudart.cudaStreamCaptureModeRelaxed;
        };
        try (CudaBackend backend = GpuTests.open()) {
            Communicator[] comms = FlexLink.initAll(backend, splitting(share), new int[n]);
            RuntimeStream[] streams = streams(backend, n, "graph." + modeName);
            List<String> failures = new ArrayList<>();
            for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.ALL_GATHER,
                    Collective.REDUCE_SCATTER}) {
                failures.addAll(replays(backend, comms, streams, c, COUNT, mode));
            }
            long[] bytes = Paths.bytes(comms[0]);
            assertTrue(bytes[bytes.length - 1] > 0, "the PCIe path carried data: " + Paths.names(comms[0]));
            close(comms, streams);
            assertEquals(List.of(), failures);
        }
    }

    /**
     * Two graphs of the same communicators (an AllReduce and a ReduceScatter, each on its own buffers),
     * replayed one after the other again and again, with eager calls of both collectives between them: each
     * replay's counters and staging slots must not depend on what the other graph or an eager call did last. At
     * four ranks the middle ranks' items are two runs of rows: the eager calls batch them (one
     * {@code cudaMemcpy3DBatchAsync}), the captured ones must not (no graph node for it).
     */
    @ParameterizedTest(name = "{0} ranks, share {1}")
    @CsvSource({"1, pcie=0.3", "2, auto", "4, auto"})
    void twoGraphsOfOneCommunicatorReplayInTurnWithEagerCallsBetween(int n, String share) {
        try (CudaBackend backend = GpuTests.open()) {
            Communicator[] comms = FlexLink.initAll(backend, splitting(share), new int[n]);
            RuntimeStream[] streams = streams(backend, n, "graph.two");
            long pcieBefore;
            List<String> failures = new ArrayList<>();
            try (CapturedCalls a = new CapturedCalls(backend, comms, Collective.ALL_REDUCE, COUNT, DATA_SETS);
                 CapturedCalls b = new CapturedCalls(backend, comms, Collective.REDUCE_SCATTER, COUNT + 5, DATA_SETS)) {
                RuntimeGraph[] ga = a.capture(streams, -1);
                RuntimeGraph[] gb = b.capture(streams, -1);
                long[] bytes = Paths.bytes(comms[0]);
                pcieBefore = bytes[bytes.length - 1];
                for (int i = 0; i < 400 && failures.size() < 5; i++) {
                    int k = i % DATA_SETS;
                    boolean eager = i % 7 == 3;
                    a.prepare(k);
                    b.prepare((k + 1) % DATA_SETS);
                    if (eager) {
                        b.enqueue(streams);
                        a.enqueue(streams);
                    } else if (i % 2 == 0) {
                        CapturedCalls.launch(ga, streams);
                        CapturedCalls.launch(gb, streams);
                    } else {
                        CapturedCalls.launch(gb, streams);
                        CapturedCalls.launch(ga, streams);
                    }
                    String run = (eager ? "eager call " : "replay ") + i;
                    a.check(k, streams, run, failures);
                    b.check((k + 1) % DATA_SETS, streams, run, failures);
                }
                CapturedCalls.close(ga);
                CapturedCalls.close(gb);
            }
            long[] bytes = Paths.bytes(comms[0]);
            // replays are not counted (the host does not see them): only the eager calls add PCIe bytes
            assertTrue(bytes[bytes.length - 1] > pcieBefore, "the eager calls used the PCIe path: "
                    + java.util.Arrays.toString(bytes));
            close(comms, streams);
            assertEquals(List.of(), failures);
        }
    }

    private static FlexLinkConfig splitting(String share) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda").set(FlexLinkConfig.SHARE, share)
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    private static RuntimeStream[] streams(CudaBackend backend, int n, String label) {
        RuntimeStream[] streams = new RuntimeStream[n];
        for (int r = 0; r < n; r++) {
            streams[r] = backend.createStream(0, label + ".r" + r);
        }
        return streams;
    }

    /** Closes every communicator (after capture: must return), then its stream. */
    private static void close(Communicator[] comms, RuntimeStream[] streams) {
        for (int r = 0; r < comms.length; r++) {
            comms[r].close();
            streams[r].close();
        }
    }

    /**
     * A communicator with the primary path alone, above the split size: no auxiliary path, but the watchdog
     * (on, the default) must still know that the stream is being captured.
     */
    @org.junit.jupiter.api.Test
    void aCommunicatorWithThePrimaryPathAloneIsCapturedAboveTheSplitSize() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.PATHS, "primary").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (CudaBackend backend = GpuTests.open()) {
            Communicator[] comms = FlexLink.initAll(backend, config, new int[1]);
            RuntimeStream[] streams = {backend.createStream(0, "graph.primary")};
            assertEquals(List.of("primary"), Paths.names(comms[0]));
            List<String> failures = new ArrayList<>();
            for (Collective c : Collective.collectives()) {
                failures.addAll(replays(backend, comms, streams, c, COUNT));
            }
            comms[0].close();
            streams[0].close();
            assertEquals(List.of(), failures);
        }
    }

    /** A graph whose communicator was closed refuses to replay (it would use the freed staging and scratch). */
    @org.junit.jupiter.api.Test
    void aReplayAfterItsCommunicatorWasClosedIsRefused() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (CudaBackend backend = GpuTests.open()) {
            Communicator comm = FlexLink.initAll(backend, config, new int[1])[0];
            RuntimeStream stream = backend.createStream(0, "graph.closed");
            DeviceMemory buf = backend.allocate(0, 4L * COUNT);
            stream.beginCapture();
            comm.allReduce(buf.address(), buf.address(), COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
            RuntimeGraph graph = stream.endCapture();
            graph.launch(stream); // while the communicator lives
            stream.synchronize();
            comm.close();
            io.flexlink.FlexLinkException e = org.junit.jupiter.api.Assertions.assertThrows(
                    io.flexlink.FlexLinkException.class, () -> graph.launch(stream));
            assertEquals(io.flexlink.Result.INVALID_USAGE, e.result());
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            graph.close();
            buf.close();
            stream.close();
        }
    }

    /**
     * Many calls below the split size in one capture, the watchdog on: none may leave an event recorded into the
     * capture in the watchdog's ring. Its retirement, when the ring fills (on the calling thread, inside the
     * capture and after it), queries those events, and CUDA refuses a query of an event last recorded in a
     * capture (cudaErrorCapturedEvent).
     */
    @org.junit.jupiter.api.Test
    void manyCallsBelowTheSplitSizeInOneCaptureLeaveTheWatchdogAlone() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        int calls = 200;
        int n = 1024;
        java.nio.ByteBuffer data = java.nio.ByteBuffer.allocateDirect(4 * n).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        java.util.SplittableRandom random = new java.util.SplittableRandom(11);
        for (int i = 0; i < n; i++) {
            data.putFloat(4 * i, (float) random.nextInt(1 << 20));
        }
        try (CudaBackend backend = GpuTests.open()) {
            Communicator comm = FlexLink.initAll(backend, config, new int[1])[0];
            RuntimeStream stream = backend.createStream(0, "graph.many");
            try (DeviceMemory buf = backend.allocate(0, 4L * n)) {
                backend.upload(buf.address(), data);
                stream.beginCapture();
                for (int i = 0; i < calls; i++) {
                    comm.allReduce(buf.address(), buf.address(), n, DataType.FLOAT32, ReduceOp.SUM, stream);
                }
                RuntimeGraph graph = stream.endCapture();
                for (int replay = 0; replay < 3; replay++) {
                    graph.launch(stream);
                }
                for (int i = 0; i < calls; i++) { // eager calls fill the ring again: its retirement runs
                    comm.allReduce(buf.address(), buf.address(), n, DataType.FLOAT32, ReduceOp.SUM, stream);
                }
                stream.synchronize();
                graph.close();
                java.nio.ByteBuffer back = java.nio.ByteBuffer.allocateDirect(4 * n).order(data.order());
                backend.download(back, buf.address());
                for (int i = 0; i < n; i++) {
                    assertEquals(data.getFloat(4 * i), back.getFloat(4 * i), "element " + i + ": 1 rank's SUM");
                }
                assertEquals(io.flexlink.Result.SUCCESS, comm.getAsyncError());
            } finally {
                comm.close();
                stream.close();
            }
        }
    }

    private static List<String> replays(CudaBackend backend, Communicator[] comms, RuntimeStream[] streams,
                                        Collective c, long count) {
        return replays(backend, comms, streams, c, count, -1);
    }

    /**
     * Captures one call of {@code c} on every rank, then replays it {@link #REPLAYS} times with new data before
     * each replay and an eager call of the same communicators every hundredth time; {@code mode} as in
     * {@link CapturedCalls#capture}.
     */
    private static List<String> replays(CudaBackend backend, Communicator[] comms, RuntimeStream[] streams,
                                        Collective c, long count, int mode) {
        List<String> failures = new ArrayList<>();
        try (CapturedCalls calls = new CapturedCalls(backend, comms, c, count, DATA_SETS)) {
            RuntimeGraph[] graphs = calls.capture(streams, mode);
            for (int i = 0; i < REPLAYS && failures.size() < 5; i++) {
                int k = i % DATA_SETS;
                boolean eager = i % 100 == 50; // an eager call of the same communicators between replays
                calls.prepare(k);
                if (eager) {
                    calls.enqueue(streams);
                } else {
                    CapturedCalls.launch(graphs, streams);
                }
                calls.check(k, streams, (eager ? "eager call " : "replay ") + i, failures);
            }
            CapturedCalls.close(graphs);
        }
        return failures;
    }
}
