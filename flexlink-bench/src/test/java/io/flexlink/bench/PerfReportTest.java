package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.topo.GpuInfo;
import io.flexlink.topo.Topology;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What flexlink-perf reports beyond the rows: vs at one rank, the footer, failures, topology and versions. */
class PerfReportTest {
    @TempDir
    Path tmp;

    private static String[] args(String line, String... more) {
        List<String> a = new java.util.ArrayList<>(List.of(line.trim().split("\\s+")));
        a.addAll(List.of(more));
        return a.toArray(new String[0]);
    }

    private static PerfMainTest.Outcome perf(DataCheck.Tamper tamper, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = PerfMain.run(args, o, e, System.getenv(), tamper);
        }
        return new PerfMainTest.Outcome(code, out.toString(StandardCharsets.UTF_8),
                err.toString(StandardCharsets.UTF_8));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Path file) throws Exception {
        return (Map<String, Object>) Json.parse(Files.readString(file));
    }

    @Test
    void oneRankComparesAlgbwSoTheGateWorks() throws Exception {
        for (String c : new String[] {"all_reduce", "all_gather"}) {
            Path json = tmp.resolve(c + "-1rank.json");
            String base = c + " -b 256K -e 1M -f 4 -g 1 -n 2 -w 1 --backend host --baseline";
            PerfMainTest.Outcome pass = PerfMainTest.perf(args(base + " --gate 0.0 --json", json.toString()));
            assertEquals(0, pass.code, pass::toString);
            assertTrue(pass.out.contains("# Gate: passed"), pass::toString);
            assertTrue(pass.out.contains("vs = FlexLink algbw / baseline algbw"), pass::toString);
            assertTrue(pass.out.contains("(busbw is 0 on one rank"), pass::toString);
            assertEquals(2, pass.rows().size(), pass::toString);
            for (String r : pass.rows()) {
                String[] f = r.trim().split("\\s+");
                assertEquals(0.0, Double.parseDouble(f[7]), r);           // busbw is 0 on one rank ...
                assertTrue(Double.parseDouble(f[f.length - 1]) > 0, r); // ... but vs is a number
            }
            Map<String, Object> doc = json(json);
            assertEquals("algbw", doc.get("vs_basis"));
            for (Object o : (List<?>) doc.get("results")) {
                assertTrue(((Number) ((Map<?, ?>) o).get("vs")).doubleValue() > 0, o::toString);
            }
            PerfMainTest.Outcome fail = PerfMainTest.perf(args(base + " --gate 1000"));
            assertEquals(PerfMain.EXIT_GATE, fail.code, fail::toString);
            assertTrue(fail.out.contains(": algbw "), fail::toString);
            assertFalse(fail.out.contains("baseline busbw is 0"), fail::toString);
        }
    }

    @Test
    void severalRanksStillCompareBusbw() throws Exception {
        Path json = tmp.resolve("2ranks.json");
        PerfMainTest.Outcome o = PerfMainTest.perf(args("all_reduce -b 256K -e 256K -g 2 -n 1 -w 0 -c 0"
                + " --backend host --baseline --json", json.toString()));
        assertEquals(0, o.code, o::toString);
        assertTrue(o.out.contains("vs = FlexLink busbw / baseline busbw;"), o::toString);
        assertFalse(o.out.contains("busbw is 0"), o::toString);
        assertEquals("busbw", json(json).get("vs_basis"));
    }

    @Test
    void averageBusBandwidthCountsOutOfPlaceAndInPlaceRuns() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        ResultTable table = new ResultTable(out, List.of(), true, false, false);
        double[][] busbw = {{10, 20}, {30, 40}};
        for (double[] b : busbw) {
            Row r = new Row(1 << 20, 1 << 18, DataType.FLOAT32, PerfOp.SUM, -1);
            r.outOfPlace = new Row.Run(100, b[0], b[0], 0);
            r.inPlace = new Row.Run(100, b[1], b[1], 0);
            table.row(r);
        }
        // nccl-tests: (10 + 20 + 30 + 40) / 4 runs, not the out-of-place mean (20)
        assertEquals(25.0, table.averageBusBw(), 1e-12);
        table.footer("all_reduce_perf", Double.NaN);
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("\n# Avg bus bandwidth    : 25 \n"),
                bytes.toString(StandardCharsets.UTF_8));
    }

    /** Inverts the first byte of local rank 0's output: one wrong element per checked call. */
    static void flipFirstByte(Workspace ws) {
        ByteBuffer b = ByteBuffer.allocateDirect(1);
        ws.backend().download(b, ws.recvAddress(0));
        b.put(0, (byte) ~b.get(0));
        b.clear();
        ws.backend().upload(ws.recvAddress(0), b);
    }

    @Test
    void aWrongElementIsCountedAndFailsTheRun() throws Exception {
        Path json = tmp.resolve("wrong.json");
        PerfMainTest.Outcome o = perf(PerfReportTest::flipFirstByte, args("all_reduce -b 1K -e 4K -f 4 -g 2 -n 1"
                + " -w 0 -c 1 --backend host --json", json.toString()));
        assertEquals(PerfMain.EXIT_FAILED, o.code, o::toString);
        assertEquals(2, o.rows().size(), o::toString);
        for (String r : o.rows()) {
            String[] f = r.trim().split("\\s+");
            assertEquals("1", f[8], r);   // out-of-place #wrong
            assertEquals("1", f[12], r);  // in-place #wrong
        }
        assertTrue(o.out.contains("\n# Out of bounds values : 4 FAILED\n"), o::toString);
        assertTrue(o.err.contains("rank 0 [0] = 0x"), o::toString);
        assertTrue(o.err.contains("flexlink-perf: 4 wrong elements (see #wrong)"), o::toString);
        Map<?, ?> oob = (Map<?, ?>) json(json).get("out_of_bounds");
        assertEquals(4.0, oob.get("count"));
        assertEquals(Boolean.FALSE, oob.get("okay"));
    }

    @Test
    void theFooterStaysLastAfterTheBalancedShares() {
        PerfMainTest.Outcome o = PerfMainTest.perf(args("all_reduce -b 1M -e 1M -g 2 -n 1 -w 0 -c 0 --backend host"
                + " --share auto --history"));
        assertEquals(0, o.code, o::toString);
        assertTrue(o.out.contains("# Balanced shares"), o::toString);
        assertTrue(o.out.indexOf("# Balanced shares") < o.out.indexOf("# Out of bounds values"), o::toString);
        // nccl-tests ends with the program's name, a "#" line and an empty line
        assertTrue(o.out.endsWith("\n# Collective test concluded: all_reduce_perf\n#\n\n"), o::toString);
    }

    @Test
    void jsonRecordsTheTopologyAndVersionsTheBackendReports() throws Exception {
        Path json = tmp.resolve("host.json");
        PerfMainTest.Outcome o = PerfMainTest.perf(args("all_gather -b 4K -e 4K -g 2 -n 1 -w 0 --backend host --json",
                json.toString()));
        assertEquals(0, o.code, o::toString);
        assertTrue(o.out.contains("\n# Topology: host devices="), o::toString);
        Map<String, Object> doc = json(json);
        Map<?, ?> versions = (Map<?, ?>) doc.get("versions");
        assertTrue(String.valueOf(versions.get("primary_transport")).matches("host ring \\(\\d+ B x \\d+ slots\\)"),
                versions::toString);
        assertTrue(versions.containsKey("backend_libraries"), versions::toString);
        Map<?, ?> topo = (Map<?, ?>) doc.get("topology");
        assertEquals("host", topo.get("backend"));
        int devices = ((Number) topo.get("device_count")).intValue();
        assertTrue(((String) topo.get("fingerprint")).startsWith("host devices=" + devices + " "), topo::toString);
        assertNull(topo.get("gpus"), "the host backend probes no GPUs");
    }

    @Test
    void aProbedTopologyNamesEachGpu() throws Exception {
        Topology t = new Topology("cuda", "flexlink 0.1.0, NCCL 2.28.3, driver 13.0", List.of(
                new GpuInfo(0, "NVIDIA H200", "0000:19:00.0", 5, 16, 0, 18, 150L << 30),
                new GpuInfo(1, "NVIDIA H200", "0000:3b:00.0", 5, 16, 0, 18, 150L << 30)));
        BackendFacts f = new BackendFacts("cuda", "cuda backend (2 devices)", 2, "NCCL 2.28.3", t.fingerprint(), t);
        assertEquals("[0000:3b:00.0] NVIDIA H200", f.deviceLabel(1));
        assertTrue(f.headerLine().startsWith("# Topology: backend=cuda gpus=2 [0:NVIDIA H200@0000:19:00.0"),
                f.headerLine());
        Map<?, ?> topo = (Map<?, ?>) Json.parse(f.json().toString());
        assertEquals("flexlink 0.1.0, NCCL 2.28.3, driver 13.0", topo.get("library_versions"));
        List<?> gpus = (List<?>) topo.get("gpus");
        assertEquals(2, gpus.size());
        Map<?, ?> g1 = (Map<?, ?>) gpus.get(1);
        assertEquals("NVIDIA H200", g1.get("model"));
        assertEquals("0000:3b:00.0", g1.get("pci_bus_id"));
        assertEquals(18.0, g1.get("nvlink_count"));
        assertEquals(5.0, g1.get("pcie_generation"));
    }

    @Test
    void aMistypedEmulationIsAUsageError() {
        PerfMainTest.Outcome o = PerfMainTest.perf(args("all_reduce -b 1K -e 1K -n 1 -w 0 --backend host"
                + " --emulate pcei:1KB/s,primray:1KB/s"));
        assertEquals(PerfMain.EXIT_USAGE, o.code, o::toString);
        assertEquals(1, o.errLines().size(), o::toString);
        assertTrue(o.err.contains("unknown path 'pcei'"), o::toString);
        PerfMainTest.Outcome unit = PerfMainTest.perf(args("all_reduce -b 1K -e 1K -n 1 -w 0 --backend host"
                + " --emulate pcie:0MB/s"));
        assertEquals(PerfMain.EXIT_USAGE, unit.code, unit::toString);
        assertEquals(1, unit.errLines().size(), unit::toString);
        assertTrue(unit.err.contains("rate '0MB/s' must be positive"), unit::toString);
    }
}
