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
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.Paths;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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

    private static List<String> replays(CudaBackend backend, Communicator[] comms, RuntimeStream[] streams,
                                        Collective c, long count) {
        int n = comms.length;
        DataType type = DataType.FLOAT32;
        ReduceOp op = ReduceOp.SUM;
        int sz = type.size();
        int root = n - 1;
        long inElems = Expected.inputCount(c, count, n);
        long outElems = Expected.outputCount(c, count, n);
        DeviceMemory[] in = new DeviceMemory[n];
        DeviceMemory[] out = new DeviceMemory[n];
        ByteBuffer[][] inputs = new ByteBuffer[DATA_SETS][n];
        ByteBuffer[][] expected = new ByteBuffer[DATA_SETS][n];
        ReduceOp dataOp = DataPattern.dataOp(c, op);
        for (int r = 0; r < n; r++) {
            in[r] = backend.allocate(0, inElems * sz);
            out[r] = backend.allocate(0, outElems * sz);
            for (int k = 0; k < DATA_SETS; k++) {
                inputs[k][r] = buffer(inElems * sz);
                DataPattern.fill(inputs[k][r], type, dataOp, 77 + k, n, r, 0, inElems);
                expected[k][r] = buffer(outElems * sz);
                for (long i = 0; i < outElems; i++) {
                    DataPattern.put(expected[k][r].position((int) (i * sz)), type,
                            Expected.output(c, type, op, 77 + k, n, r, root, count, i));
                }
                expected[k][r].position(0);
            }
        }
        List<String> failures = new ArrayList<>();
        RuntimeGraph[] graphs = new RuntimeGraph[n];
        for (int r = 0; r < n; r++) {
            streams[r].beginCapture();
        }
        FlexLink.groupStart();
        for (int r = 0; r < n; r++) {
            CollectiveHarness.enqueue(c, comms[r], in[r].address(), out[r].address(), count, type, op, root, streams[r]);
        }
        FlexLink.groupEnd();
        for (int r = 0; r < n; r++) {
            graphs[r] = streams[r].endCapture();
        }
        ByteBuffer got = buffer(outElems * sz);
        for (int i = 0; i < REPLAYS && failures.size() < 5; i++) {
            int k = i % DATA_SETS;
            boolean eager = i % 100 == 50; // an eager call of the same communicators between replays
            for (int r = 0; r < n; r++) {
                backend.upload(in[r].address(), inputs[k][r].duplicate());
                backend.fill(out[r].address(), outElems * sz, (byte) 0xA5);
            }
            if (eager) {
                FlexLink.groupStart();
                for (int r = 0; r < n; r++) {
                    CollectiveHarness.enqueue(c, comms[r], in[r].address(), out[r].address(), count, type, op, root,
                            streams[r]);
                }
                FlexLink.groupEnd();
            } else {
                for (int r = 0; r < n; r++) {
                    graphs[r].launch(streams[r]);
                }
            }
            for (int r = 0; r < n; r++) {
                streams[r].synchronize();
                if (!Expected.writes(c, r, root)) {
                    continue;
                }
                backend.download(got.duplicate(), out[r].address());
                int at = got.duplicate().mismatch(expected[k][r].duplicate());
                if (at >= 0) {
                    failures.add(c + " " + (eager ? "eager call" : "replay") + " " + i + ", rank " + r
                            + ": first wrong byte " + at);
                }
            }
        }
        for (int r = 0; r < n; r++) {
            graphs[r].close();
            in[r].close();
            out[r].close();
        }
        return failures;
    }

    private static ByteBuffer buffer(long bytes) {
        return ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    }
}
