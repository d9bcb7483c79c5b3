package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.testing.ProcessJob;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two emulated nodes of two ranks as four JVMs, each running {@code flexlink-perf <collective> --from-env
 * --backend host -c 1} with {@code FLEXLINK_NODE_ID=a|b}, RANK 0-3, WORLD_SIZE=4, LOCAL_RANK 0-1 and
 * MASTER_ADDR=127.0.0.1: every collective is correct on every process. Each process compares every output
 * element with the exact expected bits (exit code 0 only when none differs), so the four processes' results
 * are bit-identical; rank 0's header shows the layout and --history the stage times.
 */
class PerfMultiNodeTest {
    @TempDir
    Path logs;

    private static List<Map<String, String>> twoByTwo() {
        List<Map<String, String>> per = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            per.add(Map.of("FLEXLINK_NODE_ID", r < 2 ? "a" : "b", "LOCAL_RANK", String.valueOf(r % 2),
                    "LOCAL_WORLD_SIZE", "2"));
        }
        return per;
    }

    @Test
    void everyCollectiveIsCorrectOnFourProcessesOfTwoNodes() throws Exception {
        Map<String, String> env = Map.of("FLEXLINK_TUNING_CACHE", "off", "FLEXLINK_INIT_TIMEOUT", "60s");
        for (String c : List.of("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall")) {
            List<String> args = List.of(c, "-b", "4K", "-e", "1M", "-f", "16", "-n", "2", "-w", "1", "-c", "1",
                    "--from-env", "--backend", "host", "--share", "pcie=0.3", "--chunk", "64K", "--min-split", "0",
                    "-r", "3", "-d", "float,int32", "--history");
            try (ProcessJob job = new ProcessJob(4, PerfMain.class.getName(), args, env, twoByTwo(), null,
                    logs.resolve(c).toFile().mkdirs() ? logs.resolve(c) : logs.resolve(c))) {
                for (int r = 0; r < 4; r++) {
                    assertEquals(PerfMain.EXIT_OK, job.awaitExit(r, 120), c + ": rank " + r + job.describe());
                }
                String table = String.join("\n", job.output(0));
                assertTrue(table.contains("# Out of bounds values : 0 OK"), c + ": " + table);
                assertTrue(table.contains("# Nodes: nodes 2 × ranks 2, rails TCP ring"), c + ": " + table);
                long rows = table.lines().filter(l -> l.matches("^\\s+\\d+\\s+\\d+\\s+(float|int32)\\s.*")).count();
                assertEquals(6, rows, c + ": " + table);
                assertTrue(table.contains("# Hierarchy stages (rank 0, nodes 2 × ranks 2)") && table.contains("inter"),
                        c + ": " + table);
                for (int r = 1; r < 4; r++) {
                    assertEquals("", String.join("\n", job.output(r)), "only rank 0 prints the table");
                }
            }
        }
    }

    /**
     * NCCL_TESTS_SPLIT on two nodes: MOD 2 pairs rank 0 with rank 2 and rank 1 with rank 3, so each
     * sub-communicator spans both nodes (nccl-tests' "AND 0x7 on 8 GPUs per node": inter-node only).
     */
    @Test
    void theSplitsSubCommunicatorsSpanTheNodes() throws Exception {
        Map<String, String> env = Map.of("FLEXLINK_TUNING_CACHE", "off", "FLEXLINK_INIT_TIMEOUT", "60s",
                "NCCL_TESTS_SPLIT", "MOD 2");
        List<String> args = List.of("all_gather", "-b", "4K", "-e", "64K", "-f", "16", "-n", "2", "-w", "1", "-c", "1",
                "--from-env", "--backend", "host", "-d", "float");
        Path dir = logs.resolve("split");
        java.nio.file.Files.createDirectories(dir);
        try (ProcessJob job = new ProcessJob(4, PerfMain.class.getName(), args, env, twoByTwo(), null, dir)) {
            for (int r = 0; r < 4; r++) {
                assertEquals(PerfMain.EXIT_OK, job.awaitExit(r, 120), "rank " + r + job.describe());
            }
            String table = String.join("\n", job.output(0));
            assertTrue(table.contains("# Split: NCCL_TESTS_SPLIT=MOD 2 (color = rank % 2): 2 sub-communicators of 2 "
                    + "ranks"), table);
            for (int r = 0; r < 4; r++) {
                assertTrue(table.contains("#  Rank  " + r + " Group  " + (r % 2) + " Pid"), table);
            }
            List<String> rows = table.lines().filter(l -> l.matches("^\\s+\\d+\\s+\\d+\\s+float\\s.*")).toList();
            assertEquals(2, rows.size(), table);
            assertEquals("512", rows.get(0).trim().split("\\s+")[1], "count per rank of a 2-rank all_gather: " + table);
            assertTrue(table.contains("# Out of bounds values : 0 OK"), table);
        }
    }

    /**
     * sendrecv's ring crosses nodes (rank 1 sends to rank 2 of the other node, rank 3 to rank 0) over the
     * multi-node communicator's peer links: every process ends well and rank 0's out-of-place row is checked
     * with no wrong element (in place is not defined for a send and a receive on one buffer: N/A).
     */
    @Test
    void sendrecvAcrossNodesIsCheckedOnEveryProcess() throws Exception {
        Map<String, String> env = Map.of("FLEXLINK_TUNING_CACHE", "off", "FLEXLINK_INIT_TIMEOUT", "60s");
        List<String> args = List.of("sendrecv", "-b", "4K", "-e", "64K", "-f", "16", "-n", "1", "-w", "0", "-c", "1",
                "--from-env", "--backend", "host", "--min-split", "0", "-d", "float");
        Path dir = logs.resolve("sendrecv");
        java.nio.file.Files.createDirectories(dir);
        try (ProcessJob job = new ProcessJob(4, PerfMain.class.getName(), args, env, twoByTwo(), null, dir)) {
            for (int r = 0; r < 4; r++) {
                assertEquals(PerfMain.EXIT_OK, job.awaitExit(r, 120), "rank " + r + job.describe());
            }
            String table = String.join("\n", job.output(0));
            List<String> rows = table.lines().filter(l -> l.matches("^\\s+\\d+\\s+\\d+\\s+float\\s.*")).toList();
            assertEquals(2, rows.size(), table);
            for (String row : rows) {
                String[] f = row.trim().split("\\s+");
                assertEquals("0", f[8], "out-of-place #wrong: " + table);
                assertEquals("N/A", f[12], "in-place #wrong: " + table);
            }
            assertTrue(table.contains("# Out of bounds values : 0 OK"), table);
        }
    }
}
