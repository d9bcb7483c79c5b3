package io.flexlink.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.testing.ProcessJob;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The buckets with one JVM per rank (torchrun's variables, TCP rendezvous, staging in /dev/shm). */
class MultiProcessBucketsTest {
    private static final String MAIN = BucketsRankMain.class.getName();

    @TempDir
    Path logs;

    @Test
    void threeProcessesReduceEveryGradientExactly() throws Exception {
        try (ProcessJob job = new ProcessJob(3, MAIN, List.of("exact"), ProcessJob.hostEnv("60s"), null, "OK", logs)) {
            for (int r = 0; r < 3; r++) {
                assertEquals(0, job.awaitExit(r, 120), "rank " + r + job.describe());
                assertNotNull(job.line(r, "OK"), job.describe());
            }
        }
    }

    @Test
    void aProcessRegisteringInAnotherOrderFailsEveryProcessWithinTheTimeout() throws Exception {
        long start = System.nanoTime();
        try (ProcessJob job = new ProcessJob(2, MAIN, List.of("mismatch"), ProcessJob.hostEnv("30s"), null, "BUILT",
                logs)) {
            for (int r = 0; r < 2; r++) {
                assertEquals(2, job.awaitExit(r, 60), "rank " + r + " fails instead of hanging" + job.describe());
                String error = job.line(r, "ERROR ");
                assertNotNull(error, job.describe());
                assertTrue(error.contains("INVALID_USAGE") && error.contains("rank 1 registered 2 parameters"), error);
            }
        }
        assertTrue(System.nanoTime() - start < 60_000_000_000L, "within the 60 s bound");
    }
}
