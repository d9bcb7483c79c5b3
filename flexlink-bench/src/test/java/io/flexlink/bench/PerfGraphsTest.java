package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RuntimeGraph;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * -G's loop, as nccl-tests' BenchTime: every rank's stream begins its capture before the first call of
 * the -n x -m iterations is enqueued and ends it after the last, the threads meet, and each rank's graph
 * is launched -G times. The host backend cannot capture (PerfRefusalsTest: -G is refused there), so
 * these streams are host streams whose capture and graphs a proxy plays, logging what happens.
 */
class PerfGraphsTest {
    /** What happened, in order: {@code begin r}, {@code end r}, {@code enqueue from-to @iter}, {@code launch r}, ... */
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());

    /** A host stream whose beginCapture/endCapture are logged and whose graphs log their launches and close. */
    private RuntimeStream capturing(RuntimeStream real, int rank) {
        boolean[] capturing = {false};
        return (RuntimeStream) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {RuntimeStream.class},
                (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "beginCapture":
                            log.add("begin " + rank);
                            capturing[0] = true;
                            return null;
                        case "isCapturing":
                            return capturing[0];
                        case "pollForDomain":
                            return !capturing[0] && real.pollForDomain(); // a stream being captured is not asked
                        case "endCapture":
                            log.add("end " + rank);
                            capturing[0] = false;
                            return new RuntimeGraph() {
                                @Override
                                public void launch(RuntimeStream stream) {
                                    log.add("launch " + rank + (stream == proxy ? "" : " on another stream"));
                                }

                                @Override
                                public void close() {
                                    log.add("close " + rank);
                                }
                            };
                        default:
                            try {
                                return m.invoke(real, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                    }
                });
    }

    /** Logs each enqueue; fails at the {@code failAt}-th if non-negative. */
    private final class LoggingTarget implements CallTarget {
        int enqueues;
        int failAt = -1;

        @Override
        public String label() {
            return "logging";
        }

        @Override
        public void groupStart() {
            log.add("groupStart");
        }

        @Override
        public void groupEnd() {
            log.add("groupEnd");
        }

        @Override
        public void enqueue(CallSpec call, int from, int to, int iter) {
            if (enqueues++ == failAt) {
                throw new IllegalStateException("enqueue failed");
            }
            log.add("enqueue " + from + "-" + to + " @" + iter);
        }

        @Override
        public AutoCloseable registerBuffer(int r, long address, long bytes) {
            return null;
        }

        @Override
        public void abort() {
        }

        @Override
        public void close() {
        }
    }

    private Workspace workspace(HostBackend backend, int ranks) {
        Workspace.StreamSource streams = new Workspace.StreamSource() {
            @Override
            public RuntimeStream open(int rank, int device) {
                return capturing(backend.createStream(device, "g" + rank), rank);
            }

            @Override
            public void close() {
            }
        };
        int[] devices = new int[ranks];
        for (int r = 0; r < ranks; r++) {
            devices[r] = r;
        }
        return new Workspace(backend, streams, devices, 4096, 0, 0, RankLayout.whole(ranks));
    }

    private static HostBackend host() {
        return new HostBackend(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build());
    }

    @Test
    void theIterationsAreCapturedOnceAndTheGraphsLaunchedGTimes() {
        try (HostBackend backend = host(); Workspace ws = workspace(backend, 2);
             DriverThreads threads = new DriverThreads(1, 2, null)) {
            PerfOptions o = new PerfOptions();
            o.aggIters = 2;
            o.graphLaunches = 3;
            CallSpec call = new CallSpec(PerfCollective.ALLTOALL, PerfCollective.ALLTOALL.shape(1024, DataType.FLOAT32, 2),
                    DataType.FLOAT32, PerfOp.SUM, -1, ws);
            ws.layout(call.shape, false);
            LoggingTarget target = new LoggingTarget();
            TimedLoop.Times t = new TimedLoop(o, new StreamWait(ws, 0), threads).run(target, call, 0, 2);
            List<String> want = List.of(
                    "begin 0", "begin 1",
                    "groupStart", "enqueue 0-2 @0", "enqueue 0-2 @1", "groupEnd",
                    "groupStart", "enqueue 0-2 @2", "enqueue 0-2 @3", "groupEnd",
                    "end 0", "end 1",
                    "launch 0", "launch 1", "launch 0", "launch 1", "launch 0", "launch 1",
                    "close 0", "close 1");
            assertEquals(want, log);
            assertNull(t.iterations, "no per-iteration times with -G");
            assertTrue(t.seconds >= 0 && t.seconds < 1, () -> String.valueOf(t.seconds));
        }
    }

    @Test
    void timeIsOverIterationsAggregationAndLaunches() {
        // nccl-tests: deltaSec = elapsed / (iters x agg_iters) / cudaGraphLaunches. A launch that takes
        // 10 ms each (the proxy's graph sleeps) over -n 2 -m 1 -G 5: 5 x 10 ms / (2 x 5) = 5 ms per call
        try (HostBackend backend = host(); DriverThreads threads = new DriverThreads(1, 1, null)) {
            Workspace.StreamSource slow = new Workspace.StreamSource() {
                @Override
                public RuntimeStream open(int rank, int device) {
                    RuntimeStream real = backend.createStream(device, "slow");
                    return (RuntimeStream) Proxy.newProxyInstance(getClass().getClassLoader(),
                            new Class<?>[] {RuntimeStream.class}, (proxy, m, args) -> {
                                if (m.getName().equals("beginCapture")) {
                                    return null;
                                }
                                if (m.getName().equals("endCapture")) {
                                    return new RuntimeGraph() {
                                        @Override
                                        public void launch(RuntimeStream stream) {
                                            try {
                                                Thread.sleep(10);
                                            } catch (InterruptedException e) {
                                                Thread.currentThread().interrupt();
                                            }
                                        }

                                        @Override
                                        public void close() {
                                        }
                                    };
                                }
                                try {
                                    return m.invoke(real, args);
                                } catch (InvocationTargetException e) {
                                    throw e.getCause();
                                }
                            });
                }

                @Override
                public void close() {
                }
            };
            try (Workspace ws = new Workspace(backend, slow, new int[] {0}, 4096, 0, 0, RankLayout.whole(1))) {
                PerfOptions o = new PerfOptions();
                o.aggIters = 1;
                o.graphLaunches = 5;
                CallSpec call = new CallSpec(PerfCollective.SENDRECV, PerfCollective.SENDRECV.shape(64, DataType.INT8, 1),
                        DataType.INT8, PerfOp.SUM, -1, ws);
                ws.layout(call.shape, false);
                TimedLoop.Times t = new TimedLoop(o, new StreamWait(ws, 0), threads).run(new LoggingTarget(), call, 0, 2);
                assertTrue(t.seconds >= 0.005 && t.seconds < 0.05, () -> t.seconds + " s per call");
            }
        }
    }

    @Test
    void aCallThatFailsDuringTheCaptureEndsEveryCaptureBegun() {
        try (HostBackend backend = host(); Workspace ws = workspace(backend, 3)) {
            LoggingTarget target = new LoggingTarget();
            target.failAt = 1;
            CallSpec call = new CallSpec(PerfCollective.GATHER, PerfCollective.GATHER.shape(1024, DataType.FLOAT32, 3),
                    DataType.FLOAT32, PerfOp.SUM, 0, ws);
            ws.layout(call.shape, false);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> GraphCapture.capture(ws, 0, 3,
                    () -> {
                        target.enqueue(call, 0, 3, 0);
                        target.enqueue(call, 0, 3, 1);
                    }));
            assertEquals("enqueue failed", e.getMessage());
            assertEquals(List.of("begin 0", "begin 1", "begin 2", "enqueue 0-3 @0", "end 0", "close 0", "end 1",
                    "close 1", "end 2", "close 2"), log);
        }
    }
}
