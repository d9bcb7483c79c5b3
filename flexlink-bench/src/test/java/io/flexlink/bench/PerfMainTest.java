package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.runtime.BackendProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PerfMainTest {
    /** A table row: size, count, type, redop, root, then numbers or N/A. */
    private static final Pattern ROW = Pattern.compile("^\\s+\\d+\\s+\\d+\\s+\\S+\\s+\\S+\\s+-?\\d+\\s.*");

    /** nccl-tests 2.19's table header, character for character (each line ends with its timestamp column's space). */
    static final String[] HEADER = {
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
    };

    @TempDir
    Path tmp;

    /** What one in-process run printed. */
    static final class Outcome {
        final int code;
        final String out;
        final String err;

        Outcome(int code, String out, String err) {
            this.code = code;
            this.out = out;
            this.err = err;
        }

        List<String> rows() {
            List<String> rows = new ArrayList<>();
            for (String l : out.split("\n")) {
                if (ROW.matcher(l).matches()) {
                    rows.add(l);
                }
            }
            return rows;
        }

        List<String> errLines() {
            List<String> lines = new ArrayList<>();
            for (String l : err.split("\n")) {
                if (!l.isBlank()) {
                    lines.add(l);
                }
            }
            return lines;
        }

        @Override
        public String toString() {
            return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /** The CUDA backend's provider on the class path, or null (through the runtime SPI, as the tool finds it). */
    static BackendProvider cudaProvider() {
        for (BackendProvider p : java.util.ServiceLoader.load(BackendProvider.class)) {
            if (p.name().equals("cuda")) {
                return p;
            }
        }
        return null;
    }

    static Outcome perf(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = PerfMain.run(args, o, e);
        }
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String[] args(String line, String... more) {
        List<String> a = new ArrayList<>(Arrays.asList(line.trim().split("\\s+")));
        a.addAll(Arrays.asList(more));
        return a.toArray(new String[0]);
    }

    @ParameterizedTest
    @ValueSource(strings = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"})
    void everyTypeAndOperationChecksOut(String collective) throws Exception {
        Path json = tmp.resolve(collective + ".json");
        Outcome o = perf(args(collective + " -b 1K -e 64K -f 4 -g 4 -c 1 -d all -o all -n 2 -w 1 --share pcie=0.25"
                + " --chunk 4K --backend host --json", json.toString()));
        assertEquals(0, o.code, o::toString);
        assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
        assertTrue(o.out.contains("\n# Avg bus bandwidth    : "), o::toString);
        for (int i = 0; i < HEADER.length; i++) {
            assertTrue(o.out.contains("\n" + HEADER[i]), HEADER[i] + "\n" + o);
        }
        boolean reduces = !collective.equals("all_gather") && !collective.equals("broadcast");
        int sizes = 4; // 1K 4K 16K 64K
        int expected = sizes * DataType.values().length * (reduces ? PerfOp.values().length : 1); // -o all: mulsum too
        List<String> rows = o.rows();
        assertEquals(expected, rows.size(), o::toString);
        for (String r : rows) {
            String[] f = r.trim().split("\\s+");
            assertEquals("0", f[8], r);   // out-of-place #wrong
            assertEquals("0", f[12], r);  // in-place #wrong
        }

        @SuppressWarnings("unchecked")
        Map<String, Object> doc = (Map<String, Object>) Json.parse(Files.readString(json));
        List<?> results = (List<?>) doc.get("results");
        assertEquals(expected, results.size());
        @SuppressWarnings("unchecked")
        Map<String, Object> first = (Map<String, Object>) results.get(0);
        assertEquals(1024.0, first.get("size"));
        assertEquals("int8", first.get("type"));
        assertTrue(first.containsKey("out_of_place") && first.containsKey("in_place") && first.containsKey("shares"));
        @SuppressWarnings("unchecked")
        Map<String, Object> env = (Map<String, Object>) doc.get("environment");
        assertEquals("host", env.get("backend"));
        assertEquals(4.0, env.get("ranks"));
        assertEquals(4, ((List<?>) env.get("devices")).size());
        assertTrue(((Map<?, ?>) doc.get("versions")).containsKey("flexlink"));
        assertTrue(((Map<?, ?>) doc.get("settings")).containsKey("flexlink.share"));
        assertEquals(4, ((List<?>) ((Map<?, ?>) doc.get("path_totals")).get("flexlink")).size());
        assertEquals(Boolean.TRUE, ((Map<?, ?>) doc.get("out_of_bounds")).get("okay"));
    }

    /**
     * -o mulsum with nccl-tests' meaning (a PreMulSum, scalar 1 on even ranks and 2 on odd ones) on every
     * collective that reduces, every type, split between the paths, both baselines run (the raw host ring
     * scales then sums), every element checked: 0 wrong everywhere.
     */
    @ParameterizedTest
    @ValueSource(strings = {"all_reduce", "reduce_scatter", "reduce"})
    void mulsumChecksOut(String collective) {
        Outcome o = perf(args(collective + " -b 1K -e 256K -f 16 -g 3 -c 1 -d all -o mulsum -n 2 -w 1"
                + " --share pcie=0.25 --min-split 0 --chunk 4K --baseline --backend host"));
        assertEquals(0, o.code, o::toString);
        List<String> rows = o.rows();
        assertEquals(3 * DataType.values().length, rows.size(), o::toString); // 1K 16K 256K
        for (String r : rows) {
            String[] f = r.trim().split("\\s+");
            assertEquals("mulsum", f[3], r);
            assertEquals("0", f[8], r);   // out-of-place #wrong
            assertEquals("0", f[12], r);  // in-place #wrong
        }
        assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
    }

    @Test
    void acceptanceSweepUpTo64M() {
        Outcome o = perf(args("all_reduce -b 1K -e 64M -f 4 -g 4 -c 1 --share pcie=0.25 --backend host -n 2 -w 1"));
        assertEquals(0, o.code, o::toString);
        assertEquals(9, o.rows().size(), o::toString);
        assertTrue(o.out.contains("# Out of bounds values : 0 OK"), o::toString);
        assertTrue(o.out.contains("share_pcie"), o::toString);
        // from 1M up (min split) the PCIe path carries its configured quarter, measured from the stats
        String last = o.rows().get(8);
        assertTrue(last.trim().startsWith("67108864"), last);
        assertTrue(last.trim().endsWith("0.250"), last);
        assertTrue(o.rows().get(0).trim().endsWith("0.000"), o.rows().get(0));
    }

    @Test
    void sharesAreMeasuredWhenEveryCallSplits() {
        Outcome o = perf(args("reduce_scatter -b 64K -e 256K -f 4 -g 3 -d float,int64 -o max -n 2 -w 1"
                + " --share pcie=0.5 --chunk 4K --min-split 0 --backend host -c 1"));
        assertEquals(0, o.code, o::toString);
        assertEquals(4, o.rows().size(), o::toString);
        for (String r : o.rows()) {
            double share = Double.parseDouble(r.trim().split("\\s+")[13]);
            assertEquals(0.5, share, 0.02, r);
        }
    }

    @Test
    void noCheckPrintsNa() {
        Outcome o = perf(args("broadcast -b 4K -e 4K -g 2 -r 1 -c 0 -n 1 -w 0 --backend host --paths primary"));
        assertEquals(0, o.code, o::toString);
        // no auxiliary path and no baseline: exactly nccl-tests' header lines
        for (String h : HEADER) {
            assertTrue(o.out.contains("\n" + h + "\n"), h + "\n" + o);
        }
        assertEquals(1, o.rows().size(), o::toString);
        String[] f = o.rows().get(0).trim().split("\\s+");
        assertEquals("none", f[3]);
        assertEquals("1", f[4]);
        assertEquals("N/A", f[8]);
    }

    @Test
    void usageErrorsExit2WithOneLine() {
        String[][] bad = {
            args("all_reduce -b x"),
            args("all_scatter -b 1K -e 1K"),
            args("all_reduce -d nosuchtype -b 1K -e 1K"),
            args("all_reduce -o nosuchop -b 1K -e 1K"),
            args("all_reduce -b 1K -e 1K --gate 1"),
            args("all_reduce -b 1K -e 1K --share pcie=7"),
            args("all_reduce -b 2K -e 1K"),
            args("all_reduce --no-such-option"),
            args(""),
        };
        for (String[] a : bad) {
            Outcome o = perf(a);
            assertEquals(2, o.code, () -> String.join(" ", a) + "\n" + o);
            assertEquals(1, o.errLines().size(), () -> String.join(" ", a) + "\n" + o);
            assertFalse(o.err.contains("\tat "), o::toString);
            assertTrue(o.errLines().get(0).startsWith("flexlink-perf: "), o::toString);
        }
    }

    @Test
    void cudaWithoutGpuExits2WithOneLine() {
        BackendProvider cuda = cudaProvider();
        Assumptions.assumeTrue(cuda == null || cuda.unavailableReason() != null, "a GPU is usable here");
        Outcome o = perf(args("all_reduce -b 1K -e 1K -n 1 -w 0 --backend cuda"));
        assertEquals(2, o.code, o::toString);
        assertEquals(1, o.errLines().size(), o::toString);
        assertTrue(o.err.contains("cuda"), o::toString);
        assertFalse(o.err.contains("\tat "), o::toString);
    }

    @Test
    void autoBackendSaysWhyItIsHost() throws Exception {
        BackendProvider cuda = cudaProvider();
        Assumptions.assumeTrue(cuda == null || cuda.unavailableReason() != null, "a GPU is usable here");
        Path json = tmp.resolve("auto.json");
        Outcome o = perf(args("all_reduce -b 1K -e 1K -g 2 -n 1 -w 0 --json", json.toString()));
        assertEquals(0, o.code, o::toString);
        // one short line; why CUDA cannot run goes to -v's log and the JSON
        assertTrue(o.out.contains("\n# Backend: host (no GPU: host backend)\n"), o::toString);
        assertFalse(o.out.contains("UnsatisfiedLinkError") || o.out.contains("cuda unavailable"), o::toString);
        Map<?, ?> env = (Map<?, ?>) ((Map<?, ?>) Json.parse(Files.readString(json))).get("environment");
        assertTrue(env.get("backend_detail") instanceof String && !((String) env.get("backend_detail")).isEmpty(),
                env::toString);
        assertTrue(o.out.contains("#  Rank  1 Group  0 Pid"), o::toString);
    }

    @Test
    void gatePassesAtZeroAndFailsAtAThousand() {
        String base = "all_reduce -b 256K -e 1M -f 4 -g 2 -n 2 -w 1 --share pcie=0.25 --backend host --baseline";
        Outcome pass = perf(args(base + " --gate 0.0"));
        assertEquals(0, pass.code, pass::toString);
        assertTrue(pass.out.contains("# Gate: passed"), pass::toString);
        assertTrue(pass.out.contains("      vs"), pass::toString);
        Outcome fail = perf(args(base + " --gate 1000"));
        assertEquals(3, fail.code, fail::toString);
        assertTrue(fail.out.contains("# Gate: FAILED"), fail::toString);
        assertTrue(fail.out.contains("#   262144 B float sum"), fail::toString);
    }

    @Test
    void plotWritesAPng() throws Exception {
        Path png = tmp.resolve("out/plot.png");
        Outcome o = perf(args("all_gather -b 64K -e 1M -f 4 -g 2 -n 1 -w 0 -c 0 --share pcie=0.25 --backend host"
                + " --min-split 0 --baseline --plot", png.toString()));
        assertEquals(0, o.code, o::toString);
        byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head);
    }

    @Test
    void cFormatMatchesPrintf() {
        assertEquals("0", CFormat.g(0));
        assertEquals("12", CFormat.g(12));
        assertEquals("0.478983", CFormat.g(0.4789834));
        assertEquals("123457", CFormat.g(123456.7));
        assertEquals("1.23457e+06", CFormat.g(1234567));
        assertEquals("1e-05", CFormat.g(0.00001));
        assertEquals("   0.05", CFormat.fit(0.049999, 7));
        assertEquals("32669.4", CFormat.fit(32669.4, 7));
        assertEquals(" 130519", CFormat.fit(130519.2, 7));
    }

    @Test
    void sweepAndShapesFollowNcclTests() {
        assertEquals(List.of(1024L, 4096L, 16384L, 65536L), SizeSweep.sizes(1024, 65536, 4, 0));
        assertEquals(List.of(1000L, 2000L, 3000L), SizeSweep.sizes(1000, 3500, 1, 1000));
        PerfCollective.Shape ag = PerfCollective.ALL_GATHER.shape(1 << 20, DataType.FLOAT32, 3);
        assertEquals(87380, ag.count);           // (262144 / 3) rounded down to 4 floats
        assertEquals(87380L * 3 * 4, ag.bytes);  // the receive buffer
        PerfCollective.Shape rs = PerfCollective.REDUCE_SCATTER.shape(1 << 20, DataType.INT8, 4);
        assertEquals(262144, rs.count);
        assertEquals(1 << 20, rs.bytes);         // the send buffer
    }
}
