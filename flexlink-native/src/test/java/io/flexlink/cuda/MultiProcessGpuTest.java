package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.testing.ProcessJob;
import io.flexlink.testing.RankMain;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two JVMs on GPU 0, one rank each (torchrun's variables, {@code CUDA_VISIBLE_DEVICES=0}): NCCL refuses
 * two ranks on one GPU, so the communicator runs the PCIe path alone, through staging memory that both
 * processes map from /dev/shm and pin with cudaHostRegister. Every element is checked, and AllReduce
 * and AllGather results are bit-identical across the processes.
 */
@Tag("gpu")
class MultiProcessGpuTest {
    @TempDir
    Path logs;

    @Test
    void twoProcessesOnOneGpuRunThePciePath() throws Exception {
        GpuTests.assumeCuda();
        Map<String, String> env = new java.util.HashMap<>(ProcessJob.hostEnv("120s"));
        env.put("FLEXLINK_BACKEND", "cuda");
        env.put("FLEXLINK_CHUNK_BYTES", "2M");
        env.put("CUDA_VISIBLE_DEVICES", "0");
        env.put("CUDA_DEVICE_MAX_CONNECTIONS", "32");
        try (ProcessJob job = new ProcessJob(2, RankMain.class.getName(), List.of("check", "6000017"), env, null,
                "READY", logs)) {
            for (int r = 0; r < 2; r++) {
                assertEquals(0, job.awaitExit(r, 300), "rank " + r + job.describe());
            }
            for (String c : List.of("all_reduce", "all_gather", "reduce_scatter")) {
                String a = job.line(0, "DIGEST " + c + " ");
                String b = job.line(1, "DIGEST " + c + " ");
                assertNotNull(a, job.describe());
                assertNotNull(b, job.describe());
                assertTrue(a.endsWith("wrong=0") && b.endsWith("wrong=0"), a + " / " + b);
                if (!c.equals("reduce_scatter")) {
                    assertEquals(a, b, c + " bit-identical on both processes");
                }
            }
            assertEquals(List.of(), job.leftoverShm(Path.of("/dev/shm")));
        }
    }
}
