package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** nccl-tests 2.19's options, each run on the host backend and its output checked. */
class PerfFlagsTest {
    private static final String BASE = "-b 4K -e 16K -f 4 -n 3 --backend host --chunk 4K --min-split 0 --share pcie=0.25";

    @TempDir
    Path tmp;

    private static String[] args(String line, String... more) {
        List<String> a = new ArrayList<>(List.of(line.trim().split("\\s+")));
        a.addAll(List.of(more));
        return a.toArray(new String[0]);
    }

    private static PerfMainTest.Outcome perf(String line, String... more) {
        return PerfMainTest.perf(args(line, more));
    }

    private static PerfMainTest.Outcome perf(Map<String, String> env, DataCheck.Tamper tamper, String line) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = PerfMain.run(args(line), o, e, env, tamper);
        }
        return new PerfMainTest.Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Path file) throws Exception {
        return (Map<String, Object>) Json.parse(Files.readString(file));
    }

    /** Exit 0, every row checked with no wrong element, {@code rows} rows. */
    private static void ok(PerfMainTest.Outcome o, int rows) {
        assertEquals(0, o.code, o::toString);
        assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
        assertEquals(rows, o.rows().size(), o::toString);
    }

    /**
     * -C 1, as nccl-tests' report_cputime: the time columns read cputime and hold the host's time of enqueueing a
     * call, without the wait for the streams; with the link emulated slow the calls take far longer than that,
     * so the cputime is far below the time (and algbw and busbw stay the wall time's).
     */
    @Test
    void reportCputimeShowsTheHostsTimeNotTheWallTime() throws Exception {
        String line = "all_reduce -b 256K -e 256K -g 2 --backend host --paths primary -c 0 -n 4 -w 1 --emulate primary:20MB/s "
                + "--json ";
        PerfMainTest.Outcome wall = perf(line + tmp.resolve("wall.json"));
        PerfMainTest.Outcome cpu = perf(line + tmp.resolve("cpu.json") + " -C 1");
        assertEquals(0, wall.code, wall::toString);
        assertEquals(0, cpu.code, cpu::toString);
        String header = ResultTable.ncclHeader(false, "cputime")[1].stripTrailing();
        assertTrue(cpu.out.lines().anyMatch(l -> l.startsWith(header)), header + "\n" + cpu);
        assertTrue(!wall.out.contains("cputime"), wall::toString);
        Map<String, Object> w = firstRun(json(tmp.resolve("wall.json")));
        Map<String, Object> c = firstRun(json(tmp.resolve("cpu.json")));
        double wallUs = ((Number) w.get("time")).doubleValue();
        double cpuUs = ((Number) c.get("cpu_time")).doubleValue();
        assertTrue(!c.containsKey("time") && !w.containsKey("cpu_time"), c + " / " + w);
        // 256 KB at an emulated 20 MB/s: milliseconds a call on the wire, microseconds to enqueue it
        assertTrue(wallUs > 2000, "wall time " + wallUs + " us");
        assertTrue(cpuUs < wallUs / 4, "cputime " + cpuUs + " us against the wall time's " + wallUs + " us");
        assertTrue(((Number) c.get("alg_bw")).doubleValue() < 1.0, "algbw stays the wall time's: " + c);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> firstRun(Map<String, Object> report) {
        List<Object> results = (List<Object>) report.get("results");
        return (Map<String, Object>) ((Map<String, Object>) results.get(0)).get("out_of_place");
    }

    /** A sweep that stops short of -e (8, 128, 2K, 32K for -e 64K): the warm-up still doubles up to 64K, in buffers for it. */
    @Test
    void aSweepThatStopsShortOfTheEndStillWarmsUpToIt() {
        ok(perf("all_reduce -b 8 -e 64K -f 16 -g 1 --backend host -c 1 -n 2"), 4);
        ok(perf("all_gather -b 8 -e 64K -f 16 -g 2 --backend host -c 1 -n 2"), 4);
    }

    @Test
    void theHeaderIsNcclTestsWithTheVersionAndUnalignLines() {
        PerfMainTest.Outcome o = perf("all_gather -b 1K -e 1K -g 2 -n 1 --backend host --paths primary");
        ok(o, 1);
        assertTrue(o.out.startsWith("# flexlink-perf version " + io.flexlink.FlexLink.VERSION + " (nccl-tests "
                + PerfHeader.NCCL_TESTS_VERSION + " compatible) nccl-library=none java="), o::toString);
        assertTrue(o.out.contains("\n# Collective test starting: all_gather_perf\n"), o::toString);
        // -w is 1 by default, as in nccl-tests
        assertTrue(o.out.contains("\n# nThread 1 nGpus 2 minBytes 1024 maxBytes 1024 step: 1048576(bytes) warmup iters: 1"
                + " iters: 1 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"), o::toString);
        for (String h : PerfMainTest.HEADER) {
            assertTrue(o.out.contains("\n" + h + "\n"), h + "\n" + o);
        }
    }

    @Test
    void threadsEachDriveTheirRanks() throws Exception {
        Path json = tmp.resolve("t.json");
        PerfMainTest.Outcome o = perf("all_reduce " + BASE + " -t 2 -g 2 -c 1 --json", json.toString());
        ok(o, 2);
        assertTrue(o.out.contains("# nThread 2 nGpus 2 "), o::toString);
        for (int r = 0; r < 4; r++) {
            assertTrue(o.out.contains("#  Rank  " + r + " Group  0 Pid"), o::toString);
        }
        Map<?, ?> config = (Map<?, ?>) json(json).get("config");
        assertEquals(2.0, config.get("nthreads"));
        assertEquals(2.0, config.get("ngpus"));
        assertEquals(4.0, ((Map<?, ?>) json(json).get("environment")).get("ranks"));
    }

    @Test
    void checkRunsNCallsEachOnFreshData() {
        AtomicInteger checks = new AtomicInteger();
        PerfMainTest.Outcome o = perf(Map.of(), ws -> checks.incrementAndGet(), "reduce_scatter " + BASE + " -g 2 -c 3");
        ok(o, 2);
        assertTrue(o.out.contains(" validation: 3 "), o::toString);
        assertEquals(2 * 2 * 3, checks.get(), "2 rows x (out of place, in place) x 3 checked calls");
        // a wrong element stops the checks of that run at the first bad call, which the message names
        AtomicInteger bad = new AtomicInteger();
        PerfMainTest.Outcome w = perf(Map.of(), ws -> {
            bad.incrementAndGet();
            PerfReportTest.flipFirstByte(ws);
        }, "all_reduce " + BASE.replace("-e 16K", "-e 4K") + " -g 2 -c 3");
        assertEquals(PerfMain.EXIT_FAILED, w.code, w::toString);
        assertEquals(2, bad.get(), "one checked call out of place and one in place, then stop");
        assertTrue(w.err.contains("checked call 1: 1 wrong elements"), w::toString);
        assertTrue(w.out.contains("# Out of bounds values : 2 FAILED"), w::toString);
    }

    @Test
    void aggregatedIterationsAndCycles() throws Exception {
        Path json = tmp.resolve("mN.json");
        PerfMainTest.Outcome o = perf("all_reduce " + BASE + " -g 2 -m 3 -N 2 --json", json.toString());
        ok(o, 4);
        assertTrue(o.out.contains(" agg iters: 3 "), o::toString);
        assertEquals(o.rows().get(0).substring(0, 20), o.rows().get(2).substring(0, 20), "cycle 2 repeats the sizes");
        List<?> results = (List<?>) json(json).get("results");
        assertEquals(1.0, ((Map<?, ?>) results.get(3)).get("cycle"));
        assertEquals(3.0, ((Map<?, ?>) json(json).get("config")).get("aggregated_iterations"));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3})
    void everyBlockingMode(int z) {
        PerfMainTest.Outcome o = perf("all_gather " + BASE + " -t 2 -g 1 -m 2 -z " + z);
        ok(o, 2);
        String[] notes = {null, "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n",
            "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n",
            "# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier \n"};
        if (notes[z] == null) {
            assertFalse(o.out.contains("# Blocking Enabled"), o::toString);
        } else {
            assertTrue(o.out.contains(notes[z]), o::toString);
        }
    }

    @Test
    void perIterationColumns() throws Exception {
        Path json = tmp.resolve("I.json");
        PerfMainTest.Outcome o = perf("broadcast -b 4K -e 16K -f 4 --backend host -g 2 -n 5 -I 1 -K 1 --paths primary"
                + " --json", json.toString());
        ok(o, 2);
        String[] h = ResultTable.ncclHeader(true);
        for (String line : h) {
            assertTrue(o.out.contains("\n" + line + "\n"), line + "\n" + o);
        }
        assertTrue(o.out.contains("# Per-Iteration Report: stream event timing; i_* uses max over process rows; "
                + "summary skips first 1 iterations \n"), o::toString);
        for (String r : o.rows()) {
            String[] f = r.trim().split("\\s+");
            assertEquals(5 + 2 * 8, f.length, r);
            for (int at : new int[] {9, 17}) { // i_min <= i_p99 <= i_max, all positive
                double min = Double.parseDouble(f[at]);
                double max = Double.parseDouble(f[at + 1]);
                double p99 = Double.parseDouble(f[at + 2]);
                assertTrue(min > 0 && min <= p99 && p99 <= max, r);
            }
        }
        Map<?, ?> first = (Map<?, ?>) ((List<?>) json(json).get("results")).get(0);
        Map<?, ?> perIter = (Map<?, ?>) first.get("out_of_place_per_iter");
        assertEquals(5, ((List<?>) perIter.get("times_us")).size());
        assertEquals(1.0, perIter.get("skipped_iterations"));
        assertTrue(first.containsKey("in_place_per_iter"), first::toString);
    }

    @Test
    void unalignedBuffersAreShiftedAndChecked() {
        AtomicLong misalignment = new AtomicLong(-1);
        PerfMainTest.Outcome o = perf(Map.of(), ws -> misalignment.set(ws.recvAddress(0) & 7),
                "all_reduce " + BASE + " -g 2 -u 1");
        ok(o, 2);
        assertTrue(o.out.contains(" unalign: 1\n"), o::toString);
        assertEquals(4, misalignment.get(), "one float in from an 8-byte aligned buffer");
    }

    @Test
    void fractionalSizes() {
        PerfMainTest.Outcome o = perf("all_reduce -b 1.5K -e 1.5K -n 1 --backend host");
        ok(o, 1);
        assertTrue(o.rows().get(0).trim().startsWith("1536 "), o::toString);
        assertTrue(o.out.contains(" minBytes 1536 maxBytes 1536 "), o::toString);
    }

    @Test
    void averageModesCombineTheThreadsTimes() throws Exception {
        for (int a = 0; a <= 3; a++) {
            Path json = tmp.resolve("a" + a + ".json");
            PerfMainTest.Outcome o = perf("all_reduce " + BASE + " -t 2 -a " + a + " --json", json.toString());
            ok(o, 2);
            assertEquals((double) a, ((Map<?, ?>) json(json).get("config")).get("average"));
        }
        assertEquals(1.0, RowBench.combine(0, new double[] {1, 2, 6}));
        assertEquals(3.0, RowBench.combine(1, new double[] {1, 2, 6}));
        assertEquals(1.0, RowBench.combine(2, new double[] {2, 1, 6}));
        assertEquals(6.0, RowBench.combine(3, new double[] {1, 6, 2}));
    }

    @Test
    void minimumBandwidthFromTheEnvironment() {
        String line = "all_reduce -b 64K -e 64K -n 1 -g 2 --backend host";
        PerfMainTest.Outcome pass = perf(Map.of("NCCL_TESTS_MIN_BW", "0"), null, line);
        assertEquals(0, pass.code, pass::toString);
        assertTrue(pass.out.matches("(?s).*\n# Avg bus bandwidth    : [0-9.e+-]+ OK\n.*"), pass::toString);
        PerfMainTest.Outcome fail = perf(Map.of("NCCL_TESTS_MIN_BW", "1e9"), null, line);
        assertEquals(PerfMain.EXIT_GATE, fail.code, fail::toString);
        assertTrue(fail.out.matches("(?s).*\n# Avg bus bandwidth    : [0-9.e+-]+ FAILED\n.*"), fail::toString);
        assertTrue(fail.err.contains("below 0.9 x NCCL_TESTS_MIN_BW 1e+09"), fail::toString);
    }

    @Test
    void theBaselineIsTheBackendsOwnTransportCalledDirectly() throws Exception {
        Path json = tmp.resolve("base.json");
        PerfMainTest.Outcome o = perf("all_reduce " + BASE + " -g 2 --baseline --json", json.toString());
        ok(o, 2);
        assertTrue(o.out.matches("(?s).*\n# Baseline: host ring \\([^)]*\\), called directly on the same buffers and "
                + "streams, alternating.*"), o::toString);
        assertTrue(o.out.contains("share_pcie      vs    prim\n"), o::toString);
        Map<?, ?> base = (Map<?, ?>) json(json).get("baseline");
        assertTrue(String.valueOf(base.get("raw")).matches("host ring \\([^)]*\\), called directly"), base::toString);
        assertEquals("FlexLink, primary path alone", base.get("primary_only"));
        for (Object r : (List<?>) json(json).get("results")) {
            Map<?, ?> row = (Map<?, ?>) r;
            assertTrue(((Number) row.get("vs")).doubleValue() > 0, row::toString);
            assertTrue(((Number) row.get("prim")).doubleValue() > 0, row::toString);
            assertTrue(((Number) ((Map<?, ?>) row.get("baseline")).get("time")).doubleValue() > 0, row::toString);
        }
    }

    /** -R 1: every rank's two buffers registered with each target; on the host backend nothing under it is NCCL. */
    @Test
    void localRegistrationRegistersEveryBufferWithEveryTarget() throws Exception {
        Path json = tmp.resolve("reg.json");
        PerfMainTest.Outcome o = perf("all_reduce " + BASE + " -g 2 -R 1 --baseline --json", json.toString());
        ok(o, 2);
        assertTrue(o.out.matches("(?s).*\n# Local Registration Enabled \\(-R 1\\): send and receive buffers "
                + "registered with FlexLink \\(4 buffers, 0 with NCCL\\); host ring \\([^)]*\\), called directly "
                + "\\(4 buffers, 0 with NCCL\\); FlexLink, primary path alone \\(4 buffers, 0 with NCCL\\) \n.*"),
                o::toString);
        Map<?, ?> doc = json(json);
        assertEquals(1, ((Number) ((Map<?, ?>) doc.get("config")).get("local_register")).intValue());
        List<?> parts = (List<?>) doc.get("registration");
        assertEquals(3, parts.size(), parts::toString);
        Map<?, ?> flex = (Map<?, ?>) parts.get(0);
        assertEquals("FlexLink", flex.get("target"));
        assertEquals(4, ((Number) flex.get("buffers")).intValue());
        assertEquals(0, ((Number) flex.get("with_nccl")).intValue());
        PerfMainTest.Outcome off = perf("all_reduce " + BASE + " -g 2");
        ok(off, 2);
        assertFalse(off.out.contains("Registration"), off::toString);
    }

    @Test
    void aWaitLongerThanTheTimeoutAbortsTheRun() {
        // 32 KB over a link paced at 16 KB/s: each call takes at least two seconds, far past -T 1
        PerfMainTest.Outcome o = perf("all_reduce -b 32K -e 32K -g 2 -n 2 -w 0 -c 0 --backend host --paths primary"
                + " --emulate primary:16KB/s -T 1");
        assertEquals(PerfMain.EXIT_FAILED, o.code, o::toString);
        assertTrue(o.err.contains("flexlink-perf: Test timeout (1s): rank 0's stream is still busy; every communicator "
                + "was aborted"), o::toString);
        assertEquals(0, o.rows().size(), o::toString);
    }
}
