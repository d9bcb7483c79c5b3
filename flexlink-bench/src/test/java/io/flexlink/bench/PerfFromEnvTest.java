package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * flexlink-perf --from-env: each rank of a torchrun-style job runs the tool with its own variables
 * (threads with injected environments here; the multi-process tests of flexlink-core use JVMs).
 */
class PerfFromEnvTest {
    private static Map<String, String> env(int rank, int world, int port) {
        Map<String, String> e = new HashMap<>();
        e.put("RANK", String.valueOf(rank));
        e.put("WORLD_SIZE", String.valueOf(world));
        e.put("LOCAL_RANK", String.valueOf(rank));
        e.put("MASTER_ADDR", "127.0.0.1");
        e.put("MASTER_PORT", String.valueOf(port));
        return e;
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void rankZeroPrintsTheTableAndEveryRankChecksItsOwn() throws Exception {
        int port = freePort();
        String[] args = {"all_gather", "-b", "4K", "-e", "256K", "-f", "8", "-n", "2", "-w", "1", "--backend", "host",
                "--from-env", "--share", "pcie=0.3", "--chunk", "16K", "--min-split", "0", "-r", "0"};
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Future<Integer>> codes = new ArrayList<>();
        List<ByteArrayOutputStream> outs = new ArrayList<>();
        List<ByteArrayOutputStream> errs = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            outs.add(out);
            errs.add(err);
            Map<String, String> e = env(r, 3, port);
            codes.add(pool.submit(() -> PerfMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8), e)));
        }
        for (int r = 0; r < 3; r++) {
            assertEquals(PerfMain.EXIT_OK, codes.get(r).get(120, TimeUnit.SECONDS), "rank " + r + ": "
                    + errs.get(r).toString(StandardCharsets.UTF_8) + outs.get(r).toString(StandardCharsets.UTF_8));
        }
        pool.shutdown();
        String table = outs.get(0).toString(StandardCharsets.UTF_8);
        assertTrue(table.contains("# Out of bounds values : 0 OK"), table);
        for (int r = 0; r < 3; r++) {
            assertTrue(table.contains("#  Rank  " + r + " Group  0 Pid"), "rank " + r + " listed: " + table);
        }
        long rows = table.lines().filter(l -> l.matches("^\\s+\\d+\\s+\\d+\\s+float\\s.*")).count();
        assertEquals(3, rows, table);
        assertEquals("", outs.get(1).toString(StandardCharsets.UTF_8), "only rank 0 prints the table");
        assertEquals("", outs.get(2).toString(StandardCharsets.UTF_8));
    }

    @Test
    void theBaselineChecksAndPerIterationTimesAcrossProcesses() throws Exception {
        int port = freePort();
        String[] args = {"reduce_scatter", "-b", "16K", "-e", "64K", "-f", "4", "-n", "3", "-c", "2", "-I", "1",
            "-a", "3", "-z", "3", "--backend", "host", "--from-env", "--share", "pcie=0.25", "--chunk", "4K",
            "--min-split", "0", "--baseline"};
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Future<Integer>> codes = new ArrayList<>();
        List<ByteArrayOutputStream> outs = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            outs.add(out);
            Map<String, String> e = env(r, 2, port);
            codes.add(pool.submit(() -> PerfMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), e)));
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(PerfMain.EXIT_OK, codes.get(r).get(120, TimeUnit.SECONDS), outs.get(0).toString(StandardCharsets.UTF_8));
        }
        pool.shutdown();
        String table = outs.get(0).toString(StandardCharsets.UTF_8);
        assertTrue(table.matches("(?s).*# Baseline: host ring \\([^)]*\\), called directly.*"), table);
        assertTrue(table.contains("# Out of bounds values : 0 OK"), table);
        List<String> rows = table.lines().filter(l -> l.matches("^\\s+\\d+\\s+\\d+\\s+float\\s.*")).toList();
        assertEquals(2, rows.size(), table);
        for (String row : rows) {
            String[] f = row.trim().split("\\s+");
            assertEquals(5 + 2 * 8 + 1 + 2, f.length, row); // -I columns, share_pcie, vs, prim
            assertTrue(Double.parseDouble(f[f.length - 2]) > 0, row);
        }
    }

    /**
     * NCCL_TESTS_SPLIT with one process per rank, nccl-tests' own setting (its color is the MPI rank's): each
     * process splits its rank off into its color's sub-communicator (and its baselines' ranks alike); rank
     * 0's table has every rank's Group.
     */
    @Test
    void theSplitWorksWithOneProcessPerRank() throws Exception {
        int port = freePort();
        String[] args = {"all_gather", "-b", "4K", "-e", "16K", "-f", "4", "-n", "2", "-c", "1", "--backend", "host",
            "--from-env", "--baseline"};
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<Integer>> codes = new ArrayList<>();
        List<ByteArrayOutputStream> outs = new ArrayList<>();
        List<ByteArrayOutputStream> errs = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            outs.add(out);
            errs.add(err);
            Map<String, String> e = env(r, 4, port);
            e.put("NCCL_TESTS_SPLIT", "MOD 2");
            codes.add(pool.submit(() -> PerfMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8), e)));
        }
        for (int r = 0; r < 4; r++) {
            assertEquals(PerfMain.EXIT_OK, codes.get(r).get(120, TimeUnit.SECONDS), "rank " + r + ": "
                    + errs.get(r).toString(StandardCharsets.UTF_8) + outs.get(0).toString(StandardCharsets.UTF_8));
        }
        pool.shutdown();
        String table = outs.get(0).toString(StandardCharsets.UTF_8);
        assertTrue(table.contains("# Split: NCCL_TESTS_SPLIT=MOD 2 (color = rank % 2): 2 sub-communicators of 2 ranks"),
                table);
        for (int r = 0; r < 4; r++) {
            assertTrue(table.contains("#  Rank  " + r + " Group  " + (r % 2) + " Pid"), "rank " + r + ": " + table);
        }
        List<String> rows = table.lines().filter(l -> l.matches("^\\s+\\d+\\s+\\d+\\s+float\\s.*")).toList();
        assertEquals(2, rows.size(), table);
        assertEquals("512", rows.get(0).trim().split("\\s+")[1], "4 KiB / 4 B / 2 ranks per sub-communicator: " + table);
        assertTrue(table.matches("(?s).*# Baseline: host ring \\([^)]*\\), called directly.*"), table);
        for (String row : rows) {
            String[] f = row.trim().split("\\s+");
            assertTrue(Double.parseDouble(f[f.length - 2]) > 0 && Double.parseDouble(f[f.length - 1]) > 0, row); // vs, prim
        }
        assertTrue(table.contains("# Out of bounds values : 0 OK"), table);
    }

    @Test
    void usageMistakesOfFromEnvAreExitCodeTwo() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(PerfMain.EXIT_USAGE, PerfMain.run(new String[] {"all_reduce", "--from-env", "-g", "2"}, o, e,
                env(0, 2, 29500)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("-t and -g: must be 1"), err.toString(StandardCharsets.UTF_8));
        Map<String, String> noPort = env(0, 2, 29500);
        noPort.remove("MASTER_PORT");
        assertEquals(PerfMain.EXIT_USAGE, PerfMain.run(new String[] {"all_reduce", "--from-env"}, o, e, noPort));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("MASTER_PORT"), err.toString(StandardCharsets.UTF_8));
        assertEquals(PerfMain.EXIT_USAGE, PerfMain.run(new String[] {"broadcast", "--from-env", "-r", "2"}, o, e,
                env(0, 2, 29500)));
    }
}
