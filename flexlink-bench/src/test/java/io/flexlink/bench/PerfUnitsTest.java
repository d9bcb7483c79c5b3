package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The parts of flexlink-perf that follow nccl-tests' definitions, one by one. */
class PerfUnitsTest {
    @Test
    void sizesReadAsNcclTestsReadsThem() {
        assertEquals(1610612736L, NcclSize.parse("1.5G"));
        assertEquals(65536L, NcclSize.parse("64k"));
        assertEquals(8L << 20, NcclSize.parse("8MiB"));
        assertEquals(1536L, NcclSize.parse("1.5K"));
        assertEquals(1000L, NcclSize.parse("1000"));
        assertEquals(1L, NcclSize.parse("1.9"), "rounded down, as the cast to size_t");
        for (String bad : new String[] {"x", "-1", "1.5T", "", "K", "1e300G"}) {
            assertThrows(IllegalArgumentException.class, () -> NcclSize.parse(bad), bad);
        }
    }

    @Test
    void theTableOfCollectivesHasNcclTestsFactorsAndLayouts() {
        assertEquals(1.5, PerfCollective.ALL_REDUCE.busFactor(4));
        assertEquals(0.75, PerfCollective.ALL_GATHER.busFactor(4));
        assertEquals(0.75, PerfCollective.ALLTOALL.busFactor(4));
        assertEquals(1.0, PerfCollective.SENDRECV.busFactor(4));
        assertEquals(3, PerfCollective.HYPERCUBE.algMultiplier(4));
        PerfCollective.Shape ag = PerfCollective.ALL_GATHER.shape(1 << 20, DataType.FLOAT32, 3);
        assertEquals(87380, ag.count);
        assertEquals(87380, ag.sendInPlace, "in place rank r sends from recv + r * count");
        PerfCollective.Shape rs = PerfCollective.REDUCE_SCATTER.shape(1 << 20, DataType.INT8, 4);
        assertEquals(1 << 20, rs.bytes);
        assertEquals(262144, rs.recvInPlace);
        PerfCollective.Shape a2a = PerfCollective.ALLTOALL.shape(1 << 20, DataType.FLOAT32, 4);
        assertEquals(65536, a2a.count);
        assertEquals(1 << 20, a2a.bytes);
        assertEquals(PerfCollective.ALL_REDUCE, PerfCollective.find("all_reduce_perf"));
        assertEquals(PerfCollective.REDUCE_SCATTER, PerfCollective.find("ReduceScatter"));
        assertEquals(List.of(0L, 1L, 2L, 4L), SizeSweep.warmSizes(0, 5));
        assertEquals(List.of(3L, 6L, 12L), SizeSweep.warmSizes(3, 12));
    }

    @Test
    void perIterationStatisticsUseNearestRankPercentiles() {
        double[] t = new double[10];
        for (int i = 0; i < 10; i++) {
            t[i] = 10 - i; // 10, 9, ..., 1
        }
        IterStats s = new IterStats(t, 2); // leaves 10 and 9 out
        assertEquals(1, s.min);
        assertEquals(8, s.max);
        assertEquals(8, s.p99, "fewer than 100 samples: p99 is the maximum");
        assertEquals(4.5, s.mean, 1e-12);
        assertEquals(Math.sqrt(5.25), s.stdev, 1e-12);
        assertEquals(Math.sqrt(5.25) / 4.5 * 100, s.cvPercent(), 1e-9);
        assertEquals(98, IterStats.percentileIndex(100, 99));
        assertEquals(10, s.times.length, "the JSON keeps every iteration");
    }

    @Test
    void threadsRunAtOnceMeetAtTheBarrierAndReportTheFirstFailure() {
        try (DriverThreads threads = new DriverThreads(3, 2, null)) {
            Set<String> names = new HashSet<>(threads.run(t -> {
                threads.barrier(); // all three must be running at once to pass it
                return Thread.currentThread().getName() + "#" + t;
            }));
            assertEquals(3, names.size(), names::toString);
            assertEquals(2, threads.from(1));
            assertEquals(6, threads.to(2));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> threads.run(t -> {
                if (t == 2) {
                    throw new IllegalStateException("thread 2 failed");
                }
                threads.barrier(); // broken by thread 2's failure instead of waiting forever
                return t;
            }));
            assertEquals("thread 2 failed", e.getMessage());
        }
    }

    /** Counts what the timed loop enqueues. */
    private static final class CountingTarget implements CallTarget {
        final AtomicLong calls = new AtomicLong();
        final AtomicLong groups = new AtomicLong();
        long lastIter = -1;

        @Override
        public String label() {
            return "counting";
        }

        @Override
        public void groupStart() {
            groups.incrementAndGet();
        }

        @Override
        public void groupEnd() {
        }

        @Override
        public void enqueue(CallSpec call, int from, int to, int iter) {
            calls.addAndGet(to - from);
            lastIter = iter;
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

    @Test
    void theTimedLoopRunsIterationsOfAggregatedGroups() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build();
        try (HostBackend backend = new HostBackend(config)) {
            Workspace.StreamSource streams = new Workspace.StreamSource() {
                @Override
                public io.flexlink.runtime.RuntimeStream open(int rank, int device) {
                    return backend.createStream(device, "t" + rank);
                }

                @Override
                public void close() {
                }
            };
            try (Workspace ws = new Workspace(backend, streams, new int[] {0, 1}, 4096, 0, 0, RankLayout.whole(2));
                 DriverThreads threads = new DriverThreads(1, 2, null)) {
                PerfOptions o = new PerfOptions();
                o.aggIters = 3;
                o.blocking = 3;
                o.perIter = 1;
                CallSpec call = new CallSpec(PerfCollective.ALL_REDUCE,
                        PerfCollective.ALL_REDUCE.shape(1024, DataType.FLOAT32, 2), DataType.FLOAT32, PerfOp.SUM, -1, ws);
                ws.layout(call.shape, false);
                CountingTarget target = new CountingTarget();
                TimedLoop.Times t = new TimedLoop(o, new StreamWait(ws, 0), threads).run(target, call, 0, 4);
                assertEquals(4 * 3 * 2, target.calls.get(), "4 iterations x 3 calls x 2 ranks");
                assertEquals(4, target.groups.get(), "one group per iteration");
                assertEquals(11, target.lastIter, "calls are numbered across iterations (buffer offsets)");
                assertEquals(4, t.iterations.length);
                assertTrue(t.seconds >= 0 && t.iterations[3] >= 0, () -> t.seconds + " " + t.iterations[3]);
            }
        }
    }

    @Test
    void progressShowsOnlyOnATerminalAndOnlyForLongRuns() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        long[] now = {0};
        Progress p = new Progress(err, true, () -> now[0]);
        p.update(1, 10, "early");
        assertEquals("", bytes.toString(StandardCharsets.UTF_8), "nothing in the first seconds");
        now[0] = Progress.DELAY_NANOS;
        p.update(2, 10, "float sum 1024 B");
        assertEquals("\r# [2/10] float sum 1024 B", bytes.toString(StandardCharsets.UTF_8));
        p.clear();
        assertTrue(bytes.toString(StandardCharsets.UTF_8).endsWith("\r" + " ".repeat(25) + "\r"));
        ByteArrayOutputStream quiet = new ByteArrayOutputStream();
        Progress off = new Progress(new PrintStream(quiet, true, StandardCharsets.UTF_8), false, () -> now[0] * 2);
        off.update(1, 10, "x");
        off.clear();
        assertEquals("", quiet.toString(StandardCharsets.UTF_8), "silent when stderr is not a terminal");
    }
}
