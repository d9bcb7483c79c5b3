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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One JVM per rank, as torchrun starts them: three processes meet through the TCP rendezvous
 * ({@code FlexLink.initFromEnv}), share their staging areas through /dev/shm, and run the collectives
 * over the primary (host ring) and PCIe paths.
 */
class MultiProcessTest {
    private static final Path SHM = Path.of("/dev/shm");
    private static final String MAIN = RankMain.class.getName();

    @TempDir
    Path logs;

    @Test
    void threeProcessesAgreeBitForBit() throws Exception {
        try (ProcessJob job = new ProcessJob(3, MAIN, List.of("check", "150001"), ProcessJob.hostEnv("60s"), null,
                "READY", logs)) {
            for (int r = 0; r < 3; r++) {
                assertEquals(0, job.awaitExit(r, 90), "rank " + r + " exit code" + job.describe());
            }
            for (String c : List.of("all_reduce", "all_gather", "reduce_scatter")) {
                List<String> digests = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    String line = job.line(r, "DIGEST " + c + " ");
                    assertNotNull(line, "rank " + r + " printed no digest of " + c + job.describe());
                    assertTrue(line.endsWith("wrong=0"), line);
                    digests.add(line.split(" ")[2]);
                }
                if (!c.equals("reduce_scatter")) { // every rank holds the same result
                    assertEquals(digests.get(0), digests.get(1), c + job.describe());
                    assertEquals(digests.get(0), digests.get(2), c + job.describe());
                } else { // each rank holds its own block
                    assertNotEquals(digests.get(0), digests.get(1), c);
                }
            }
            assertEquals(List.of(), job.leftoverShm(SHM), "files of the run left in /dev/shm");
        }
    }

    @ParameterizedTest(name = "killing rank {0}")
    @ValueSource(ints = {1, 0})
    void killingOneProcessMidCollectiveFailsTheOthersQuickly(int victim) throws Exception {
        try (ProcessJob job = new ProcessJob(3, MAIN, List.of("loop", "60001"), ProcessJob.hostEnv("10s"), null,
                "READY", logs)) {
            assertTrue(job.awaitReady(90), "every rank running collectives" + job.describe());
            long killed = System.nanoTime();
            job.process(victim).destroyForcibly();
            for (int r = 0; r < 3; r++) {
                if (r == victim) {
                    continue;
                }
                int code = job.awaitExit(r, 10);
                assertEquals(3, code, "rank " + r + " fails with an error within the 10 s timeout" + job.describe());
                String error = job.line(r, "ERROR ");
                assertNotNull(error, job.describe());
            }
            assertTrue(System.nanoTime() - killed < 10_000_000_000L, "survivors failed within the timeout");
            // the first survivor to see the loss reports it; the other may have failed already through the
            // shared abort word (and exited) before its own rendezvous connection noticed
            boolean reported = false;
            for (int r = 0; r < 3; r++) {
                reported |= r != victim && job.stderr(r).contains("rank " + victim + " is gone");
            }
            assertTrue(reported, "a survivor names the lost rank" + job.describe());
            job.awaitExit(victim, 10);
            assertEquals(List.of(), job.leftoverShm(SHM), "files of the run left in /dev/shm");
        }
    }

    @Test
    void aPeerWithTheWrongSecretIsRefusedAndTheOthersTimeOut() throws Exception {
        Map<String, String> good = Map.of("FLEXLINK_SECRET", "00112233445566778899aabbccddeeff");
        Map<String, String> bad = Map.of("FLEXLINK_SECRET", "ffeeddccbbaa99887766554433221100");
        try (ProcessJob job = new ProcessJob(3, MAIN, List.of("init"), ProcessJob.hostEnv("4s"),
                List.of(good, good, bad), "READY", logs)) {
            assertEquals(2, job.awaitExit(2, 60), job.describe());
            String refused = job.line(2, "ERROR ");
            assertTrue(refused.contains("refused this rank: wrong secret"), refused);
            for (int r = 0; r < 2; r++) {
                assertEquals(2, job.awaitExit(r, 60), job.describe());
                String error = job.line(r, "ERROR ");
                assertTrue(error.startsWith("ERROR REMOTE_ERROR") && error.contains("ranks [2] of 3"),
                        "rank " + r + ": " + error);
            }
            assertTrue(job.line(0, "ERROR ").contains("wrong secret"), "rank 0 names the refused peer");
            assertTrue(job.stderr(0).contains("refused a peer"), job.describe());
            assertEquals(List.of(), job.leftoverShm(SHM));
        }
    }
}
