package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.runtime.BackendProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * flexlink-perf on the CUDA backend: the raw NCCL baseline (bytedeco, on the streams the tool wraps for
 * FlexLink), threads, per-iteration events and the checks. Skips where CUDA cannot run.
 */
@Tag("gpu")
class PerfGpuTest {
    @TempDir
    Path tmp;

    private static int gpus() {
        String reason = "no CUDA backend on the class path";
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
            if (p.name().equals("cuda")) {
                reason = p.unavailableReason();
            }
        }
        String why = reason;
        assumeTrue(why == null, () -> "no CUDA backend here: " + why);
        int[] n = {0};
        org.bytedeco.cuda.global.cudart.cudaGetDeviceCount(n);
        return n[0];
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Path file) throws Exception {
        return (Map<String, Object>) Json.parse(Files.readString(file));
    }

    @Test
    void theRawNcclBaselineRunsBesideFlexLink() throws Exception {
        int g = Math.min(gpus(), 8);
        for (String c : new String[] {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"}) {
            Path json = tmp.resolve(c + ".json");
            PerfMainTest.Outcome o = PerfMainTest.perf(("" + c + " -b 64K -e 16M -f 16 -n 4 -c 2 -g " + g
                    + " --backend cuda --baseline -I 1 --json " + json).split(" "));
            assertEquals(0, o.code, o::toString);
            assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
            assertTrue(o.out.matches("(?s).*nccl-library=2\\d{4} .*"), o::toString);
            Map<?, ?> base = (Map<?, ?>) json(json).get("baseline");
            assertTrue(((String) base.get("raw")).startsWith("NCCL 2."), base::toString);
            for (Object r : (List<?>) json(json).get("results")) {
                Map<?, ?> row = (Map<?, ?>) r;
                assertTrue(((Number) row.get("vs")).doubleValue() > 0, row::toString);
                assertTrue(((Number) ((Map<?, ?>) row.get("baseline")).get("time")).doubleValue() > 0, row::toString);
            }
        }
    }

    @Test
    void alltoallGatherScatterSendrecvAndHypercubeCheckOutBesideRawNccl() throws Exception {
        int g = Math.min(gpus(), 8);
        for (String c : new String[] {"alltoall", "gather", "scatter", "sendrecv", "hypercube"}) {
            int ranks = c.equals("hypercube") ? Integer.highestOneBit(g) : g;
            Path json = tmp.resolve(c + ".json");
            PerfMainTest.Outcome o = PerfMainTest.perf((c + " -b 64K -e 16M -f 16 -n 4 -c 2 -r all -g " + ranks
                    + " --backend cuda --baseline --json " + json).split(" "));
            assertEquals(0, o.code, o::toString);
            assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
            assertTrue(((String) ((Map<?, ?>) json(json).get("baseline")).get("raw")).startsWith("NCCL 2."), o::toString);
        }
    }

    /** -G on CUDA: every collective captured and replayed, checked through its graph, beside NCCL's graphs. */
    @Test
    void everyCollectiveRunsAsACudaGraph() {
        int g = Math.min(gpus(), 8);
        for (PerfCollective c : PerfCollective.values()) {
            int ranks = c.needsPowerOfTwoRanks() ? Integer.highestOneBit(g) : g;
            PerfMainTest.Outcome o = PerfMainTest.perf((c.testName() + " -b 64K -e 4M -f 8 -n 5 -c 2 -G 3 -g " + ranks
                    + " --backend cuda --baseline").split(" "));
            assertEquals(0, o.code, o::toString);
            assertTrue(o.out.contains(" graph: 3 "), o::toString);
            assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
        }
        // two ranks (on one GPU both on GPU 0: the PCIe path alone), every size split
        for (String c : new String[] {"all_reduce", "alltoall", "sendrecv", "hypercube"}) {
            PerfMainTest.Outcome o = PerfMainTest.perf((c + " -b 1M -e 16M -f 16 -n 4 -c 1 -G 2 -g 2"
                    + " --min-split 0 --backend cuda").split(" "));
            assertEquals(0, o.code, o::toString);
            assertTrue(o.out.contains("\n# Out of bounds values : 0 OK\n"), o::toString);
        }
    }

    @Test
    void threadsDriveTheirGpusWithRawNcclToo() {
        int g = gpus();
        assumeTrue(g >= 2, "needs two GPUs");
        PerfMainTest.Outcome o = PerfMainTest.perf(("all_reduce -b 1M -e 64M -f 8 -n 4 -c 1 -t 2 -g " + g / 2
                + " -z 1 -m 2 --backend cuda --baseline").split(" "));
        assertEquals(0, o.code, o::toString);
        assertTrue(o.out.contains("# nThread 2 nGpus " + g / 2 + " "), o::toString);
        assertTrue(o.out.contains("# Baseline: NCCL 2."), o::toString);
    }
}
