package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * NCCL_TESTS_SPLIT and NCCL_TESTS_SPLIT_MASK on the host backend: the ranks split by nccl-tests' color into
 * sub-communicators that run each call at once, the header's Group column and split line, busbw by the
 * sub-communicator's size, and every sub-communicator checked on data of its own.
 */
class PerfSplitTest {
    @TempDir
    Path tmp;

    static String[] args(String line) {
        return line.trim().split("\\s+");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Path file) throws Exception {
        return (Map<String, Object>) Json.parse(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object o) {
        return (List<Map<String, Object>>) o;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    /** The Group column of the header's {@code # Using devices} lines, rank by rank. */
    static List<Integer> groups(PerfMainTest.Outcome o) {
        List<Integer> g = new ArrayList<>();
        for (String l : o.out.split("\n")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("^#  Rank +(\\d+) Group +(\\d+) ").matcher(l);
            if (m.find()) {
                assertEquals(g.size(), Integer.parseInt(m.group(1)), o::toString);
                g.add(Integer.parseInt(m.group(2)));
            }
        }
        return g;
    }

    /** busbw / algbw of every timed run in the JSON (out of place and in place), which must all be {@code factor}. */
    private static void busFactor(Map<String, Object> doc, double factor, String why) {
        List<Map<String, Object>> results = list(doc.get("results"));
        assertTrue(!results.isEmpty(), why);
        for (Map<String, Object> r : results) {
            for (String k : new String[] {"out_of_place", "in_place"}) {
                Map<String, Object> run = map(r.get(k));
                double alg = (Double) run.get("alg_bw");
                double bus = (Double) run.get("bus_bw");
                assertTrue(alg > 0, why + ": " + r);
                assertEquals(factor, bus / alg, 1e-9, why + ": " + r);
                assertEquals(0.0, (Double) run.get("nwrong"), why + ": " + r);
            }
        }
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = ';', value = {
        "NCCL_TESTS_SPLIT; AND 0x1; 0 1 0 1; 0 0 1 1",
        "NCCL_TESTS_SPLIT; &1; 0 1 0 1; 0 0 1 1",
        "NCCL_TESTS_SPLIT; OR 1; 1 1 3 3; 0 1 0 1",
        "NCCL_TESTS_SPLIT; |0b10; 2 3 2 3; 0 0 1 1",
        "NCCL_TESTS_SPLIT; MOD 2; 0 1 0 1; 0 0 1 1",
        "NCCL_TESTS_SPLIT; %2; 0 1 0 1; 0 0 1 1",
        "NCCL_TESTS_SPLIT; DIV 2; 0 0 1 1; 0 1 0 1",
        "NCCL_TESTS_SPLIT; div 0x2; 0 0 1 1; 0 1 0 1",
        "NCCL_TESTS_SPLIT; / 2; 0 0 1 1; 0 1 0 1",
        "NCCL_TESTS_SPLIT_MASK; 2; 0 0 2 2; 0 1 0 1",
        "NCCL_TESTS_SPLIT_MASK; 0x1; 0 1 0 1; 0 0 1 1",
    })
    void everyFormSplitsFourRanksIntoTwoSubCommunicators(String variable, String value, String colors, String ranks)
            throws Exception {
        Path file = tmp.resolve("split.json");
        PerfMainTest.Outcome o = PerfRefusalsTest.perf(Map.of(variable, value), args("all_gather -b 4K -e 64K -f 4 -g 4 "
                + "--backend host -c 1 -n 2 -w 1 --json " + file));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        String why = variable + "=" + value + "\n" + o;
        List<Integer> expected = new ArrayList<>();
        for (String c : colors.split(" ")) {
            expected.add(Integer.parseInt(c));
        }
        assertEquals(expected, groups(o), why);
        assertTrue(o.out.contains("# Split: " + variable + "=" + value + " (color = rank "), why);
        assertTrue(o.out.contains(": 2 sub-communicators of 2 ranks (Group = color)"), why);
        // all_gather: count = size / 4 B / n with n = 2, the sub-communicator's size (4 ranks would give 256)
        List<String> rows = o.rows();
        assertEquals(3, rows.size(), why);
        assertEquals(List.of("4096", "512", "float"), List.of(rows.get(0).trim().split("\\s+")).subList(0, 3), why);
        Map<String, Object> doc = json(file);
        // busbw = algbw x (n-1)/n with n = 2 (unsplit it would be 3/4)
        busFactor(doc, 0.5, why);
        Map<String, Object> split = map(doc.get("split"));
        assertEquals(variable, split.get("variable"), why);
        assertEquals(2.0, split.get("communicators"), why);
        assertEquals(2.0, split.get("comm_size"), why);
        // every rank called a 2-rank communicator of its own color, at the rank the job order gives it
        List<Map<String, Object>> totals = list(map(doc.get("path_totals")).get("flexlink"));
        assertEquals(4, totals.size(), why);
        String[] commRanks = ranks.split(" ");
        for (int r = 0; r < 4; r++) {
            Map<String, Object> t = totals.get(r);
            assertEquals(2.0, t.get("comm_size"), why);
            assertEquals(Double.parseDouble(commRanks[r]), t.get("comm_rank"), why);
            double calls = 0;
            for (Map<String, Object> path : list(t.get("paths"))) {
                calls += (Double) path.get("calls");
            }
            assertTrue(calls > 0, "rank " + r + " ran no call: " + why);
        }
    }

    @Test
    void allReduceBusbwFollowsTheSubCommunicatorsSize() throws Exception {
        String line = "all_reduce -b 4K -e 16K -f 4 -g 4 --backend host -c 1 -n 2 -w 1 --json ";
        Path whole = tmp.resolve("whole.json");
        PerfMainTest.Outcome o = PerfRefusalsTest.perf(Map.of(), args(line + whole));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        busFactor(json(whole), 1.5, "unsplit: 2(n-1)/n with n = 4\n" + o);
        Path split = tmp.resolve("split.json");
        o = PerfRefusalsTest.perf(Map.of("NCCL_TESTS_SPLIT", "MOD 2"), args(line + split));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        busFactor(json(split), 1.0, "split: 2(n-1)/n with n = 2\n" + o);
        // a sub-communicator of one rank runs (as in nccl-tests): busbw is 0 there, algbw is not
        Path ones = tmp.resolve("ones.json");
        o = PerfRefusalsTest.perf(Map.of("NCCL_TESTS_SPLIT", "MOD 4"), args(line + ones));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        assertEquals(List.of(0, 1, 2, 3), groups(o), o::toString);
        assertTrue(o.out.contains(": 4 sub-communicators of 1 rank (Group = color)"), o::toString);
        busFactor(json(ones), 0.0, "one rank per sub-communicator\n" + o);
    }

    /**
     * Each sub-communicator's AllReduce reduces its own ranks' data: all ranks of one color must hold the
     * same output, and the colors' outputs differ, so an output moved within a color passes the check and
     * one moved across colors is counted wrong, element by element.
     */
    @Test
    void eachSubCommunicatorIsCheckedOnItsOwnData() {
        String[] a = args("all_reduce -b 4K -e 4K -g 4 --backend host -c 1 -n 1 -w 0");
        Map<String, String> env = Map.of("NCCL_TESTS_SPLIT", "MOD 2"); // colors 0 1 0 1
        PerfMainTest.Outcome within = perfTampered(env, a, 0, 2);
        assertEquals(PerfMain.EXIT_OK, within.code, within::toString);
        PerfMainTest.Outcome across = perfTampered(env, a, 0, 1);
        assertEquals(PerfMain.EXIT_FAILED, across.code, across::toString);
        // each element where the two colors' sums differ (most of them) is wrong, and named at job rank 1
        assertTrue(across.err.contains("out of place, checked call 1: "), across::toString);
        assertTrue(across.err.contains(" wrong elements, e.g. rank 1 ["), across::toString);
        assertTrue(across.out.contains("# Out of bounds values : 2 FAILED"), across::toString);
    }

    /** A run whose every checked output of local rank {@code to} is overwritten with rank {@code from}'s. */
    private static PerfMainTest.Outcome perfTampered(Map<String, String> env, String[] args, int from, int to) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        DataCheck.Tamper copy = ws -> {
            ByteBuffer b = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
            ws.backend().download(b, ws.recvAddress(from));
            b.clear();
            ws.backend().upload(ws.recvAddress(to), b);
        };
        int code;
        try (java.io.PrintStream o = new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8);
             java.io.PrintStream e = new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8)) {
            code = PerfMain.run(args, o, e, env, copy);
        }
        return new PerfMainTest.Outcome(code, out.toString(java.nio.charset.StandardCharsets.UTF_8),
                err.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "broadcast -r all, 4", "reduce -r 1, 2", "reduce_scatter, 2", "alltoall, 2", "gather -r 0, 2",
        "scatter -r all, 4", "sendrecv, 2", "hypercube, 2",
    })
    void everyCollectiveRunsAndChecksOnSubCommunicators(String collective, int rows) {
        PerfMainTest.Outcome o = PerfRefusalsTest.perf(Map.of("NCCL_TESTS_SPLIT", "DIV 2"), args(collective
                + " -b 4K -e 8K -f 2 -g 4 --backend host -c 1 -n 2 -w 1"));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        assertEquals(List.of(0, 0, 1, 1), groups(o), o::toString);
        // -r all: the roots of a 2-rank sub-communicator, 0 and 1, at each of the two sizes
        List<String[]> table = new ArrayList<>();
        for (String l : o.out.split("\n")) {
            if (l.matches("^\\s+\\d+\\s+\\d+\\s.*")) {
                table.add(l.trim().split("\\s+"));
            }
        }
        assertEquals(rows, table.size(), o::toString);
        for (String[] f : table) {
            // size count type [redop] root, then time algbw busbw #wrong twice (hypercube prints no redop)
            int root = f[3].matches("-?\\d+") ? 3 : 4;
            assertEquals("0", f[root + 4], o::toString);
            assertTrue(f[root + 8].equals("0") || collective.equals("sendrecv") && f[root + 8].equals("N/A"),
                    o::toString);
        }
        assertTrue(o.out.contains("# Out of bounds values : 0 OK"), o::toString);
    }

    /** Exit 2 before anything runs, one line naming the variable (or the option) and saying why. */
    private static void refused(Map<String, String> env, String line, String says) {
        PerfRefusalsTest.refused(PerfRefusalsTest.perf(env, args(line)), says);
    }

    @Test
    void badValuesAreRefusedNamingTheVariable() {
        String line = "all_reduce -b 1K -e 1K --backend host -g 4";
        String split = TestsSplit.SPLIT;
        refused(Map.of(split, "FOO 3"), line, "NCCL_TESTS_SPLIT: 'FOO 3': not <operation><value> with an operation of "
                + "AND (&), OR (|), MOD (%) or DIV (/)");
        refused(Map.of(split, ""), line, "NCCL_TESTS_SPLIT: '': not <operation><value>");
        refused(Map.of(split, "AND"), line, "NCCL_TESTS_SPLIT: 'AND': '' is not a number from 0 to 2147483647");
        refused(Map.of(split, "AND x"), line, "NCCL_TESTS_SPLIT: 'AND x': 'x' is not a number");
        refused(Map.of(split, "AND 3x"), line, "NCCL_TESTS_SPLIT: 'AND 3x': '3x' is not a number");
        refused(Map.of(split, "AND -1"), line, "NCCL_TESTS_SPLIT: 'AND -1': '-1' is not a number");
        refused(Map.of(split, "OR 4294967296"), line, "'4294967296' is not a number from 0 to 2147483647");
        refused(Map.of(split, "AND 0x"), line, "'0x' is not a hexadecimal number");
        refused(Map.of(split, "AND 0b12"), line, "'0b12' is not a binary number");
        refused(Map.of(split, "MOD 08"), line, "'08' is not an octal number");
        refused(Map.of(split, "MOD 0"), line, "NCCL_TESTS_SPLIT: 'MOD 0': MOD 0 divides by zero");
        refused(Map.of(split, "/0x0"), line, "NCCL_TESTS_SPLIT: '/0x0': DIV 0 divides by zero");
        refused(Map.of(TestsSplit.MASK, "zz"), line, "NCCL_TESTS_SPLIT_MASK: 'zz': 'zz' is not a hexadecimal number");
        refused(Map.of(TestsSplit.MASK, " "), line, "NCCL_TESTS_SPLIT_MASK: ' ': '' is not a hexadecimal number");
        // the mask wins over NCCL_TESTS_SPLIT, as in nccl-tests: its error is the one reported
        refused(Map.of(TestsSplit.MASK, "0xg", split, "MOD 2"), line, "NCCL_TESTS_SPLIT_MASK: '0xg'");
    }

    @Test
    void combinationsThatCannotWorkAreRefusedSayingWhy() {
        Map<String, String> mod2 = Map.of(TestsSplit.SPLIT, "MOD 2");
        refused(Map.of(TestsSplit.SPLIT, "DIV 3"), "all_reduce -b 1K -e 1K --backend host -g 4", "NCCL_TESTS_SPLIT: "
                + "'DIV 3' (color = rank / 3) on 4 ranks gives sub-communicators of 3 (color 0), 1 (color 1) ranks; "
                + "flexlink-perf needs them all of one size");
        refused(mod2, "hypercube -b 1K -e 1K --backend host -g 6", "hypercube: 3 ranks per sub-communicator "
                + "(NCCL_TESTS_SPLIT=MOD 2) is not a power of two");
        refused(mod2, "broadcast -b 1K -e 1K --backend host -g 4 -r 2", "-r: root 2 is not a rank of 2 per "
                + "sub-communicator (NCCL_TESTS_SPLIT=MOD 2) (or all)");
    }

    @Test
    void theMaskWinsAndOneColorForAllIsOneSubCommunicator() {
        PerfMainTest.Outcome o = PerfRefusalsTest.perf(Map.of(TestsSplit.MASK, "1", TestsSplit.SPLIT, "FOO"),
                args("all_reduce -b 1K -e 1K --backend host -g 4 -c 1 -n 1"));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        assertEquals(List.of(0, 1, 0, 1), groups(o), o::toString);
        assertTrue(o.out.contains("# Split: NCCL_TESTS_SPLIT_MASK=1 (color = rank & 0x1): 2 sub-communicators"),
                o::toString);
        o = PerfRefusalsTest.perf(Map.of(TestsSplit.SPLIT, "OR 0x7"), args("all_reduce -b 1K -e 1K --backend host "
                + "-g 4 -c 1 -n 1"));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        assertEquals(List.of(7, 7, 7, 7), groups(o), o::toString);
        assertTrue(o.out.contains("(color = rank | 0x7): 1 sub-communicator of 4 ranks"), o::toString);
        assertTrue(o.out.contains("# Out of bounds values : 0 OK"), o::toString);
    }

    /** A thread's group of calls spans its ranks' sub-communicators (-t 2 -g 2 with MOD 2: each thread one of each). */
    @Test
    void threadsDriveRanksOfSeveralSubCommunicators() {
        for (String extra : new String[] {"", " -m 2 -z 1", " -a 3 -I 1"}) {
            PerfMainTest.Outcome o = PerfRefusalsTest.perf(Map.of(TestsSplit.SPLIT, "MOD 2"), args("reduce_scatter "
                    + "-b 4K -e 16K -f 4 -t 2 -g 2 --backend host -c 2 -n 2" + extra));
            assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
            assertEquals(List.of(0, 1, 0, 1), groups(o), o::toString);
            assertEquals(2, o.rows().size(), o::toString);
            assertTrue(o.out.contains("# Out of bounds values : 0 OK"), o::toString);
        }
    }

    /** Values as nccl-tests' parseInt and strtoul read them, and each operation's color. */
    @Test
    void valuesAndColorsAreNcclTestsOnes() {
        Map<String, Integer> values = Map.of("AND 010", 8, "and0b101", 5, " MOD  3 ", 3, "%0X1f", 31, "Div 7", 7);
        values.forEach((text, v) -> assertEquals(v, TestsSplit.fromEnvironment(Map.of(TestsSplit.SPLIT, text)).value,
                text));
        assertEquals(255, TestsSplit.fromEnvironment(Map.of(TestsSplit.MASK, "ff")).value);
        assertEquals(16, TestsSplit.fromEnvironment(Map.of(TestsSplit.MASK, "0x10")).value);
        assertEquals(null, TestsSplit.fromEnvironment(Map.of()));
        int[][] colors = { // rank 7 and rank 2 under AND 6, OR 4, MOD 3, DIV 3
            {7 & 6, 2 & 6}, {7 | 4, 2 | 4}, {7 % 3, 2 % 3}, {7 / 3, 2 / 3},
        };
        String[] splits = {"AND 6", "OR 4", "MOD 3", "DIV 3"};
        String[] rules = {"color = rank & 0x6", "color = rank | 0x4", "color = rank % 3", "color = rank / 3"};
        for (int i = 0; i < splits.length; i++) {
            TestsSplit s = TestsSplit.fromEnvironment(Map.of(TestsSplit.SPLIT, splits[i]));
            assertEquals(colors[i][0], s.color(7), splits[i]);
            assertEquals(colors[i][1], s.color(2), splits[i]);
            assertEquals(rules[i], s.rule());
        }
        RankLayout l = RankLayout.split(TestsSplit.fromEnvironment(Map.of(TestsSplit.SPLIT, "AND 0x5")), 8);
        // colors 0 1 0 1 4 5 4 5: four sub-communicators of two ranks, each ranked in the job's order
        assertEquals(4, l.groups());
        assertEquals(2, l.commSize());
        int[] want = {0, 0, 1, 1, 0, 0, 1, 1};
        for (int r = 0; r < 8; r++) {
            assertEquals(r & 5, l.color(r));
            assertEquals(want[r], l.commRank(r), "rank " + r);
        }
    }
}
