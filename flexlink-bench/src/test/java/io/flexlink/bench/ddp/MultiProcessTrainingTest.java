package io.flexlink.bench.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.testing.ProcessJob;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The training example with one JVM per rank, as torchrun starts them ({@code TrainMain --from-env}): every
 * process ends with the same weights, and they are the very bits of the same run with the ranks as threads
 * of one process; the loss curve is that of one rank on the whole batch (tolerance of
 * {@link DataParallelTrainingTest}).
 */
@Timeout(300)
class MultiProcessTrainingTest {
    private static final Pattern SHA = Pattern.compile("\\(sha-256 ([0-9a-f]{64})\\)");
    private static final Pattern LOSS = Pattern.compile("^step +(\\d+) +loss (\\S+)$");

    @TempDir
    Path logs;

    @Test
    void threeProcessesTrainLikeThreeThreadsAndLikeOneRank() throws Exception {
        List<String> args = List.of("--from-env", "--layers", "16,48,48,8", "--teacher-hidden", "24", "--batch", "8",
                "--steps", "50", "--timing-rounds", "0", "--grads", "separate", "--first-bucket-cap", "1K",
                "--bucket-cap", "2K");
        try (ProcessJob job = new ProcessJob(3, TrainMain.class.getName(), args, ProcessJob.hostEnv("60s"), null,
                "READY", logs)) {
            List<String> digests = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                assertEquals(0, job.awaitExit(r, 180), "rank " + r + job.describe());
                String line = job.line(r, r == 0 ? "weights after" : "rank " + r + ": weights");
                assertNotNull(line, job.describe());
                assertTrue(line.contains("identical"), line);
                Matcher m = SHA.matcher(line);
                assertTrue(m.find(), line);
                digests.add(m.group(1));
            }
            assertEquals(digests.get(0), digests.get(1));
            assertEquals(digests.get(0), digests.get(2));
            float[] curve = new float[50];
            for (String l : job.output(0)) {
                Matcher m = LOSS.matcher(l);
                if (m.matches()) {
                    curve[Integer.parseInt(m.group(1)) - 1] = Float.parseFloat(m.group(2));
                }
            }
            // the processes' settings (ProcessJob.hostEnv) for the same run with threads
            TrainOptions threads = DataParallelTrainingTest.small(3, false).with(b -> {
                b.overrides.put(FlexLinkConfig.SHARE, "pcie=0.3");
                b.overrides.put(FlexLinkConfig.CHUNK_BYTES, "64K");
            });
            List<RankResult> inProcess = DataParallelTraining.inProcess(threads);
            assertEquals(inProcess.get(0).weights(), digests.get(0), "one process per rank = one process, bit for bit");
            double diff = LossCurves.maxRelativeDifference(curve, DataParallelTraining.reference(threads).losses());
            assertTrue(diff <= DataParallelTrainingTest.TOLERANCE, "against one rank on the whole batch: " + diff);
        }
    }
}
