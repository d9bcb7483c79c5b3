package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.testing.ProcessJob;
import io.flexlink.testing.RankMain;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two jobs of two processes on one MASTER_PORT, the same WORLD_SIZE and no job id, as the issue found
 * them: job A's rank 0 runs with job B's rank 1 (their ids are the same, nothing tells them apart). When
 * job B's rank 0 then fails to bind the port, it tells whoever listens there, and all three stop with an
 * error naming the collision, instead of A and B running on with each other's ranks and exiting 0.
 */
class JobCollisionProcessTest {
    private static final String MAIN = RankMain.class.getName();

    @TempDir
    Path logs;

    private ProcessJob rank(String job, int rank, int port) throws Exception {
        Path dir = Files.createDirectories(logs.resolve(job + rank));
        return new ProcessJob(1, MAIN, List.of("loop", "4001"), ProcessJob.hostEnv("10s"),
                List.of(Map.of("RANK", String.valueOf(rank), "WORLD_SIZE", "2", "LOCAL_RANK", String.valueOf(rank),
                        "LOCAL_WORLD_SIZE", "2", "MASTER_PORT", String.valueOf(port))), "READY", dir);
    }

    @Test
    void theSecondJobsRankZeroStopsBothJobs() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (ProcessJob a0 = rank("a", 0, port); ProcessJob b1 = rank("b", 1, port)) {
            assertTrue(a0.awaitReady(60) && b1.awaitReady(60), "A's rank 0 runs with B's rank 1" + a0.describe()
                    + b1.describe());
            try (ProcessJob b0 = rank("b", 0, port)) {
                assertEquals(3, b0.awaitExit(0, 60), "its creation fails (the loop mode's exit code)" + b0.describe());
                String why = b0.line(0, "ERROR ");
                assertNotNull(why, b0.describe());
                assertTrue(why.contains("cannot listen") && why.contains("collision"), why);
            }
            assertEquals(3, a0.awaitExit(0, 10), "job A's rank 0 stops" + a0.describe());
            assertEquals(3, b1.awaitExit(0, 10), "job B's rank 1 stops" + b1.describe());
            assertTrue(a0.line(0, "ERROR ").contains("two jobs share") || a0.stderr(0).contains("two jobs share"),
                    a0.describe());
        }
    }
}
