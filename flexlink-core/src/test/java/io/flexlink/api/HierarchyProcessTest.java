package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.testing.ProcessJob;
import io.flexlink.testing.RankMain;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two emulated nodes of two ranks, one JVM per rank, as a launcher starts them across machines:
 * {@code FLEXLINK_NODE_ID} tells each process its node, so the ranks of a node share staging through
 * /dev/shm and the nodes meet only through the TCP rails. Results agree bit for bit across the four
 * processes, and a killed rank of node b ends every rank of both nodes within seconds.
 */
class HierarchyProcessTest {
    private static final Path SHM = Path.of("/dev/shm");
    private static final String MAIN = RankMain.class.getName();

    @TempDir
    Path logs;

    /** Rank r of {@code nodes} nodes of {@code perNode} ranks, node-major: its node id and local rank. */
    static List<Map<String, String>> nodes(int nodes, int perNode) {
        List<Map<String, String>> per = new ArrayList<>();
        for (int r = 0; r < nodes * perNode; r++) {
            per.add(Map.of("FLEXLINK_NODE_ID", String.valueOf((char) ('a' + r / perNode)),
                    "LOCAL_RANK", String.valueOf(r % perNode), "LOCAL_WORLD_SIZE", String.valueOf(perNode)));
        }
        return per;
    }

    @Test
    void fourProcessesOnTwoNodesAgreeBitForBit() throws Exception {
        for (String mode : List.of("check", "random")) {
            try (ProcessJob job = new ProcessJob(4, MAIN, List.of(mode, "60001"), ProcessJob.hostEnv("60s"),
                    nodes(2, 2), "READY", logs)) {
                for (int r = 0; r < 4; r++) {
                    assertEquals(0, job.awaitExit(r, 120), "rank " + r + " exit code" + job.describe());
                }
                List<String> kinds = mode.equals("check") ? List.of("all_reduce", "all_gather", "reduce_scatter")
                        : List.of("all_reduce_random");
                for (String c : kinds) {
                    List<String> digests = new ArrayList<>();
                    for (int r = 0; r < 4; r++) {
                        String line = job.line(r, "DIGEST " + c + " ");
                        assertNotNull(line, "rank " + r + " printed no digest of " + c + job.describe());
                        assertTrue(mode.equals("random") || line.endsWith("wrong=0"), line);
                        digests.add(line.split(" ")[2]);
                    }
                    for (int r = 1; r < 4; r++) {
                        if (c.equals("reduce_scatter")) {
                            assertNotEquals(digests.get(0), digests.get(r), c + ": each rank its own block");
                        } else {
                            assertEquals(digests.get(0), digests.get(r), c + ": rank " + r + job.describe());
                        }
                    }
                }
                assertEquals(List.of(), job.leftoverShm(SHM), "files of the run left in /dev/shm");
            }
        }
    }

    @Test
    void nineProcessesOnThreeNodesAgreeBitForBit() throws Exception {
        try (ProcessJob job = new ProcessJob(9, MAIN, List.of("check", "20001"), ProcessJob.hostEnv("90s"), nodes(3, 3),
                "READY", logs)) {
            for (int r = 0; r < 9; r++) {
                assertEquals(0, job.awaitExit(r, 180), "rank " + r + " exit code" + job.describe());
            }
            for (String c : List.of("all_reduce", "all_gather")) {
                String first = job.line(0, "DIGEST " + c + " ");
                assertNotNull(first, job.describe());
                for (int r = 1; r < 9; r++) {
                    assertEquals(first.split(" ")[2], job.line(r, "DIGEST " + c + " ").split(" ")[2], c + " rank " + r);
                }
            }
            assertEquals(List.of(), job.leftoverShm(SHM), "files of the run left in /dev/shm");
        }
    }

    @Test
    void killingARankOfNodeBEndsEveryRankOfBothNodes() throws Exception {
        int victim = 3; // node b, local rank 1
        try (ProcessJob job = new ProcessJob(4, MAIN, List.of("loop", "60001"), ProcessJob.hostEnv("10s"), nodes(2, 2),
                "READY", logs)) {
            assertTrue(job.awaitReady(120), "every rank running collectives" + job.describe());
            long killed = System.nanoTime();
            job.process(victim).destroyForcibly();
            for (int r = 0; r < 4; r++) {
                if (r == victim) {
                    continue;
                }
                assertEquals(3, job.awaitExit(r, 10), "rank " + r + " fails with an error" + job.describe());
                assertNotNull(job.line(r, "ERROR "), job.describe());
            }
            assertTrue(System.nanoTime() - killed < 10_000_000_000L, "every survivor failed within 10 s");
            job.awaitExit(victim, 10);
            assertEquals(List.of(), job.leftoverShm(SHM), "files of the run left in /dev/shm");
        }
    }
}
