package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * nccl-tests' alltoall, gather, scatter, sendrecv and hypercube on the host backend: every element of
 * every rank checked for 1 to 4 ranks, odd sizes, in and out of place, every root; the checker shown to
 * fail on a wrong or unwritten element; the layouts and bandwidth factors against hand-computed values.
 */
class PerfCollectivesTest {
    @TempDir
    Path tmp;

    private static String[] args(String line, String... more) {
        List<String> a = new ArrayList<>(Arrays.asList(line.trim().split("\\s+")));
        a.addAll(Arrays.asList(more));
        return a.toArray(new String[0]);
    }

    static PerfMainTest.Outcome perf(DataCheck.Tamper tamper, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = PerfMain.run(args, o, e, Map.of(), tamper);
        }
        return new PerfMainTest.Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /**
     * One table row cut as nccl-tests prints it ({@code %12li  %12li  %8s  %6s  %6s}, then the runs): the
     * redop column may be blank (hypercube), so the fixed-width preamble is cut by position.
     */
    static final class Line {
        final long size;
        final long count;
        final String type;
        final String redop;
        final int root;
        /** time algbw busbw #wrong (out of place), the same in place, then FlexLink's extra columns. */
        final String[] runs;

        Line(String l) {
            size = Long.parseLong(l.substring(0, 12).trim());
            count = Long.parseLong(l.substring(14, 26).trim());
            type = l.substring(28, 36).trim();
            redop = l.substring(38, 44).trim();
            root = Integer.parseInt(l.substring(46, 52).trim());
            runs = l.substring(52).trim().split("\\s+");
        }

        String wrongOutOfPlace() {
            return runs[3];
        }

        String wrongInPlace() {
            return runs[7];
        }
    }

    static List<Line> lines(PerfMainTest.Outcome o) {
        List<Line> rows = new ArrayList<>();
        for (String l : o.out.split("\n")) {
            if (l.length() > 52 && !l.startsWith("#") && l.substring(0, 12).trim().matches("\\d+")) {
                rows.add(new Line(l));
            }
        }
        return rows;
    }

    /** Runs that must pass: exit 0, every run checked and right (sendrecv in place: N/A, as nccl-tests). */
    private static List<Line> allRight(PerfMainTest.Outcome o, String collective, int rows) {
        assertEquals(0, o.code, o::toString);
        assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
        assertTrue(o.out.contains("# Collective test concluded: " + collective + "_perf"), o::toString);
        List<Line> lines = lines(o);
        assertEquals(rows, lines.size(), o::toString);
        for (Line l : lines) {
            assertEquals("0", l.wrongOutOfPlace(), o::toString);
            assertEquals(collective.equals("sendrecv") ? "N/A" : "0", l.wrongInPlace(), o::toString);
        }
        return lines;
    }

    /** Sizes 1001, 7007 and 49049 bytes: not multiples of 16, nor of the rank counts. */
    private static final String ODD_SIZES = "-b 1001 -e 50000 -f 7";
    private static final String TYPES = "-d int8,half,double";

    @ParameterizedTest(name = "{0} on {1} ranks")
    @CsvSource({
        "alltoall, 1", "alltoall, 2", "alltoall, 3", "alltoall, 4",
        "gather, 1", "gather, 2", "gather, 3", "gather, 4",
        "scatter, 1", "scatter, 2", "scatter, 3", "scatter, 4",
        "sendrecv, 1", "sendrecv, 2", "sendrecv, 3", "sendrecv, 4",
        "hypercube, 1", "hypercube, 2", "hypercube, 4",
    })
    void everyElementOfEveryRankChecksOut(String collective, int ranks) throws Exception {
        boolean rooted = collective.equals("gather") || collective.equals("scatter");
        Path json = tmp.resolve(collective + ranks + ".json");
        // every root; a quarter on the PCIe path from the smallest size, in 4K chunks; both baselines
        PerfMainTest.Outcome o = perf(null, args(collective + " " + ODD_SIZES + " " + TYPES + " -g " + ranks
                + " -r all -c 1 -n 2 -w 1 --share pcie=0.25 --min-split 0 --chunk 4K --baseline --backend host"
                + " --json", json.toString()));
        int rows = 3 * 3 * (rooted ? ranks : 1);
        List<Line> lines = allRight(o, collective, rows);
        PerfCollective c = PerfCollective.find(collective);
        long[] sizes = {1001, 7007, 49049};
        for (int i = 0; i < lines.size(); i++) {
            Line l = lines.get(i);
            // rows go type by type, root by root, size by size; size and count as nccl-tests' getCollByteCount
            PerfCollective.Shape s = c.shape(sizes[i % 3], DataType.parse(l.type), ranks);
            assertEquals(s.bytes, l.size, o::toString);
            assertEquals(s.count, l.count, o::toString);
            assertEquals(collective.equals("sendrecv") ? "sum" : collective.equals("hypercube") ? "" : "none",
                    l.redop, o::toString);
            assertEquals(rooted ? (i / 3) % ranks : -1, l.root, o::toString);
        }
        if (rooted) {
            for (int r = 0; r < ranks; r++) {
                int root = r;
                assertEquals(9, lines.stream().filter(l -> l.root == root).count(), o::toString);
            }
        }
        if (!(collective.equals("hypercube") && ranks == 1)) { // one rank's hypercube sends nothing
            // the PCIe path carried its quarter at the largest size (the blocked collectives cut every block)
            assertEquals(0.25, Double.parseDouble(lines.get(2).runs[8]), 0.03, o::toString);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> doc = (Map<String, Object>) Json.parse(Files.readString(json));
        assertEquals(collective, doc.get("collective"));
        List<?> results = (List<?>) doc.get("results");
        assertEquals(rows, results.size());
        Map<?, ?> first = (Map<?, ?>) results.get(0);
        assertEquals(lines.get(0).redop, first.get("redop"));
        Map<?, ?> inPlace = (Map<?, ?>) first.get("in_place");
        if (collective.equals("sendrecv")) {
            assertNull(inPlace.get("nwrong"), "sendrecv in place is not checked");
        } else {
            assertEquals(0.0, inPlace.get("nwrong"));
        }
        assertTrue(first.containsKey("baseline") && first.containsKey("primary_only"), first::toString);
    }

    @ParameterizedTest
    @ValueSource(strings = {"alltoall", "sendrecv", "hypercube", "gather"})
    void threadsDrivingRanksOfTheirOwnExchangeRightToo(String collective) {
        // -t 2 -g 2: each thread enqueues its two ranks' groups (hypercube: one group per round)
        PerfMainTest.Outcome o = perf(null, args(collective + " -b 4099 -e 4099 -t 2 -g 2 -r 3 -c 2 -n 3 -w 1"
                + " -d float --share pcie=0.5 --min-split 0 --chunk 4K --backend host"));
        allRight(o, collective, 1);
    }

    @Test
    void hypercubeAggregatedAndBlockingStillChecksOut() {
        // -m 2 nests two calls' rounds in one group for the timing; the checked call runs alone
        PerfMainTest.Outcome o = perf(null, args("hypercube -b 64K -e 64K -g 4 -m 2 -z 1 -c 1 -n 2 -w 1"
                + " --backend host"));
        allRight(o, "hypercube", 1);
    }

    @Test
    void unalignedBuffersChangeNothing() {
        for (String c : new String[] {"alltoall", "gather", "scatter", "sendrecv", "hypercube"}) {
            allRight(perf(null, args(c + " -b 3000 -e 3000 -g 2 -u 3 -c 1 -n 1 -w 0 -d int32,bfloat16"
                    + " --backend host")), c, 2);
        }
    }

    /** Inverts the first byte of every local rank's output: one wrong element per rank that writes. */
    static void flipFirstByteEverywhere(Workspace ws) {
        for (int r = 0; r < ws.ranks(); r++) {
            ByteBuffer b = ByteBuffer.allocateDirect(1);
            ws.backend().download(b, ws.recvAddress(r));
            b.put(0, (byte) ~b.get(0));
            b.clear();
            ws.backend().upload(ws.recvAddress(r), b);
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"alltoall, 3, 3", "gather, 1, 1", "scatter, 3, 3", "sendrecv, 3, -1", "hypercube, 4, 4"})
    void aWrongElementIsCaughtOnEveryRankThatWrites(String collective, int wrong, int wrongInPlace) {
        int ranks = collective.equals("hypercube") ? 4 : 3;
        PerfMainTest.Outcome o = perf(PerfCollectivesTest::flipFirstByteEverywhere, args(collective
                + " -b 4K -e 4K -g " + ranks + " -r 1 -c 1 -n 1 -w 0 --backend host"));
        assertEquals(PerfMain.EXIT_FAILED, o.code, o::toString);
        List<Line> lines = lines(o);
        assertEquals(1, lines.size(), o::toString);
        // gather: only the root writes, and only its buffer is compared
        assertEquals(String.valueOf(wrong), lines.get(0).wrongOutOfPlace(), o::toString);
        assertEquals(wrongInPlace < 0 ? "N/A" : String.valueOf(wrongInPlace), lines.get(0).wrongInPlace(),
                o::toString);
        assertTrue(o.err.contains(" wrong elements, e.g. rank "), o::toString);
        int failedRuns = wrongInPlace < 0 ? 1 : 2;
        assertTrue(o.out.contains("\n# Out of bounds values : " + failedRuns + " FAILED\n"), o::toString);
    }

    /**
     * Outputs nobody wrote fail: after {@link DataCheck#prepare} and no call at all, every element of every
     * rank that writes differs from the expected one (the poison is its complement).
     */
    @ParameterizedTest
    @ValueSource(strings = {"alltoall", "gather", "scatter", "sendrecv", "hypercube", "reduce_scatter", "reduce"})
    void anOutputNobodyWroteIsWrongEverywhere(String name) {
        PerfCollective c = PerfCollective.find(name);
        int ranks = 4;
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build();
        try (HostBackend backend = new HostBackend(config)) {
            try (Workspace ws = new Workspace(backend, streams(backend), new int[] {0, 1, 2, 3}, 40000, 0, 0,
                    RankLayout.whole(ranks))) {
                for (DataType t : new DataType[] {DataType.INT8, DataType.FLOAT16, DataType.FLOAT64}) {
                    PerfCollective.Shape s = c.shape(39999, t, ranks);
                    CallSpec call = new CallSpec(c, s, t, PerfOp.SUM, 2, ws);
                    ws.layout(s, false);
                    DataCheck check = new DataCheck(backend);
                    check.prepare(ws, call, 7);
                    long writers = 0;
                    for (int r = 0; r < ranks; r++) {
                        writers += c.writes(r, 2) ? 1 : 0;
                    }
                    assertEquals(writers * s.recvElems, check.verify(ws), name + " " + t);
                    assertEquals(5, check.errors().size());
                }
            }
        }
    }

    static Workspace.StreamSource streams(HostBackend backend) {
        return new Workspace.StreamSource() {
            @Override
            public io.flexlink.runtime.RuntimeStream open(int rank, int device) {
                return backend.createStream(device, "t" + rank);
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    void theExpectedOutputsAreNcclTestsOnes() {
        DataType t = DataType.INT32;
        ReduceOp any = ReduceOp.MAX; // what the inputs of collectives that do not reduce are made for
        long seed = 11;
        int n = 4;
        long count = 5;
        // alltoall: block p of rank r's output is block r of rank p's input
        assertEquals(DataPattern.value(t, any, seed, n, 2, 1 * count + 3),
                PerfCollective.ALLTOALL.expected(t, PerfOp.SUM, seed, n, 1, 0, count, 2 * count + 3));
        // gather: the root's output holds every rank's input in rank order
        assertEquals(DataPattern.value(t, any, seed, n, 3, 4),
                PerfCollective.GATHER.expected(t, PerfOp.SUM, seed, n, 1, 1, count, 3 * count + 4));
        // scatter: rank r receives block r of the root's input
        assertEquals(DataPattern.value(t, any, seed, n, 2, 3 * count + 1),
                PerfCollective.SCATTER.expected(t, PerfOp.SUM, seed, n, 3, 2, count, 1));
        // sendrecv: rank r receives rank r - 1's input, rank 0 rank n - 1's; whatever -o says
        assertEquals(DataPattern.value(t, any, seed, n, 1, 4),
                PerfCollective.SENDRECV.expected(t, PerfOp.PROD, seed, n, 2, 0, count, 4));
        assertEquals(DataPattern.value(t, any, seed, n, 3, 0),
                PerfCollective.SENDRECV.expected(t, PerfOp.SUM, seed, n, 0, 0, count, 0));
        // hypercube: an AllGather
        assertEquals(Expected.output(io.flexlink.Collective.ALL_GATHER, t, ReduceOp.SUM, seed, n, 0, 0, count, 17),
                PerfCollective.HYPERCUBE.expected(t, PerfOp.SUM, seed, n, 2, 0, count, 17));
        assertEquals(ReduceOp.MAX, PerfCollective.SENDRECV.dataOp(PerfOp.PROD));
        assertEquals(ReduceOp.PROD, PerfCollective.ALL_REDUCE.dataOp(PerfOp.PROD));
        // who writes and who reads
        assertTrue(PerfCollective.GATHER.writes(1, 1) && !PerfCollective.GATHER.writes(0, 1));
        assertTrue(PerfCollective.SCATTER.reads(1, 1) && !PerfCollective.SCATTER.reads(0, 1));
        assertTrue(PerfCollective.SENDRECV.writes(0, 1) && PerfCollective.HYPERCUBE.reads(3, 0));
    }

    @Test
    void layoutsAreNcclTestsGetCollByteCount() {
        int n = 4;
        DataType f = DataType.FLOAT32;
        // alltoall: paramcount = (count / n) rounded down to 16 bytes; send = recv = n blocks; in place at 0
        PerfCollective.Shape a = PerfCollective.ALLTOALL.shape(1000, f, 3); // 250 floats / 3 = 83 -> 80
        assertEquals(80, a.count);
        assertEquals(240, a.sendElems);
        assertEquals(240, a.recvElems);
        assertEquals(0, a.sendInPlace);
        assertEquals(0, a.recvInPlace);
        assertEquals(960, a.bytes);
        // gather: send = base, recv = n x base; in place rank r sends from recv + r x base
        PerfCollective.Shape g = PerfCollective.GATHER.shape(1 << 20, f, n);
        assertEquals(65536, g.count);
        assertEquals(65536, g.sendElems);
        assertEquals(262144, g.recvElems);
        assertEquals(65536, g.sendInPlace);
        assertEquals(0, g.recvInPlace);
        // scatter: send = n x base, recv = base; in place rank r receives into send + r x base
        PerfCollective.Shape s = PerfCollective.SCATTER.shape(1 << 20, f, n);
        assertEquals(65536, s.count);
        assertEquals(262144, s.sendElems);
        assertEquals(65536, s.recvElems);
        assertEquals(0, s.sendInPlace);
        assertEquals(65536, s.recvInPlace);
        // sendrecv: the whole size, both buffers
        PerfCollective.Shape sr = PerfCollective.SENDRECV.shape(1001, DataType.INT8, 3);
        assertEquals(1001, sr.count);
        assertEquals(1001, sr.bytes);
        // hypercube: gather's layout
        PerfCollective.Shape h = PerfCollective.HYPERCUBE.shape(1001, DataType.INT8, 4); // 250 -> 240
        assertEquals(240, h.count);
        assertEquals(960, h.recvElems);
        assertEquals(240, h.sendInPlace);
    }

    @Test
    void bandwidthsAreNcclTestsGetBw() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build();
        try (HostBackend backend = new HostBackend(config);
             Workspace ws = new Workspace(backend, streams(backend), new int[] {0, 1, 2, 3}, 4096, 0, 0,
                     RankLayout.whole(4));
             DriverThreads threads = new DriverThreads(1, 4, null)) {
            PerfOptions o = new PerfOptions();
            RowBench bench = new RowBench(o, ws, threads, new StreamWait(ws, 0), null, new DataCheck(backend), null,
                    System.err);
            RowBench.Measured ms = new RowBench.Measured(1e-3, 1e-3, null);
            // 1 MiB of floats on 4 ranks, 1 ms; hand-computed from nccl-tests' *GetBw:
            // alltoall, gather, scatter: count x n x 4 B / 1 ms = 65536 x 4 x 4 / 1e6 = 1.048576 GB/s, busbw x 3/4
            // sendrecv: count x 4 B / 1 ms = 262144 x 4 / 1e6 = 1.048576, busbw = algbw
            // hypercube: count x 4 B x (n - 1) / 1 ms = 65536 x 4 x 3 / 1e6 = 0.786432, busbw = algbw
            Object[][] want = {
                {PerfCollective.ALLTOALL, 1.048576, 0.786432},
                {PerfCollective.GATHER, 1.048576, 0.786432},
                {PerfCollective.SCATTER, 1.048576, 0.786432},
                {PerfCollective.SENDRECV, 1.048576, 1.048576},
                {PerfCollective.HYPERCUBE, 0.786432, 0.786432},
            };
            for (Object[] w : want) {
                PerfCollective c = (PerfCollective) w[0];
                CallSpec call = new CallSpec(c, c.shape(1 << 20, DataType.FLOAT32, 4), DataType.FLOAT32, PerfOp.SUM,
                        0, ws);
                Row.Run run = bench.run(call, ms, 0);
                assertEquals((double) w[1], run.algBw, 1e-12, c::toString);
                assertEquals((double) w[2], run.busBw, 1e-12, c::toString);
                assertEquals(1000.0, run.timeUs, 1e-9);
            }
            // factors: (n-1)/n for alltoall, gather, scatter; 1 for sendrecv and hypercube, whose algbw
            // counts n - 1 blocks (0 on one rank)
            assertEquals(2.0 / 3, PerfCollective.GATHER.busFactor(3), 1e-15);
            assertEquals(0.0, PerfCollective.SCATTER.busFactor(1));
            assertEquals(1.0, PerfCollective.SENDRECV.busFactor(3));
            assertEquals(1, PerfCollective.SENDRECV.algMultiplier(3));
            assertEquals(3, PerfCollective.ALLTOALL.algMultiplier(3));
            assertEquals(7, PerfCollective.HYPERCUBE.algMultiplier(8));
            assertEquals(0, PerfCollective.HYPERCUBE.algMultiplier(1));
        }
    }

    @Test
    void hypercubeJsonWithItsBlankRedopReplots() throws Exception {
        Path json = tmp.resolve("hc.json");
        PerfMainTest.Outcome o = perf(null, args("hypercube -b 4K -e 16K -f 4 -g 2 -c 1 -n 1 -w 0 --backend host"
                + " --json", json.toString()));
        assertEquals(0, o.code, o::toString);
        Path png = tmp.resolve("hc.png");
        PerfMainTest.Outcome re = perf(null, args("hypercube --replot " + json + " --plot " + png));
        assertEquals(0, re.code, re::toString);
        assertTrue(Files.size(png) > 0);
    }
}
