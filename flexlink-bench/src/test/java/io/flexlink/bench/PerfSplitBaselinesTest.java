package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * --baseline with NCCL_TESTS_SPLIT on the host backend: the host ring and FlexLink's primary-only run are
 * split into the same sub-communicators as the run, so each computes its own sub-communicator's result,
 * which the -c check (per color) accepts and an unsplit baseline's would not.
 */
class PerfSplitBaselinesTest {
    private static final int[] DEVICES = {0, 1, 2, 3};

    @TempDir
    Path tmp;

    private static PerfOptions options(Map<String, String> env) {
        PerfOptions o = new PerfOptions();
        new CommandLine(o).parseArgs("all_reduce", "-g", "4", "--backend", "host", "-c", "1", "--baseline");
        o.environment = env;
        OptionChecks.validate(o);
        return o;
    }

    /** Wrong elements of one checked call of {@code c} on {@code target}, laid out and checked per {@code ws}. */
    private static long wrong(RowBench bench, CallTarget target, PerfCollective c, int root, Workspace ws) {
        CallSpec call = new CallSpec(c, c.shape(4096, DataType.FLOAT32, ws.commSize()), DataType.FLOAT32, PerfOp.of(ReduceOp.SUM),
                root, ws);
        Row row = new Row(call.shape.bytes, call.shape.count, call.type, call.op, root);
        return bench.check(target, call, false, 11, row);
    }

    @Test
    void theBaselinesRunOnTheSubCommunicators() {
        PerfOptions o = options(Map.of(TestsSplit.SPLIT, "MOD 2"));
        FlexLinkConfig config = o.flex.config();
        try (HostBackend backend = new HostBackend(config);
             Workspace ws = new Workspace(backend, PerfCollectivesTest.streams(backend), DEVICES, 4096, 0, 0, o.layout);
             DriverThreads threads = new DriverThreads(1, 4, null);
             Baselines split = Baselines.open(o, backend, config, DEVICES, PerfCollectivesTest.streams(backend), null,
                     true);
             Baselines whole = Baselines.open(options(Map.of()), backend, config, DEVICES,
                     PerfCollectivesTest.streams(backend), null, true)) {
            RowBench bench = new RowBench(o, ws, threads, new StreamWait(ws, 0), null, new DataCheck(backend), null,
                    System.err);
            assertNotNull(split.raw);
            assertNotNull(split.primaryOnly);
            for (CallTarget t : List.of(split.raw, split.primaryOnly)) {
                for (PerfCollective c : List.of(PerfCollective.ALL_REDUCE, PerfCollective.ALL_GATHER,
                        PerfCollective.SENDRECV, PerfCollective.HYPERCUBE)) {
                    assertEquals(0, wrong(bench, t, c, 0, ws), t.label() + " " + c);
                }
                assertEquals(0, wrong(bench, t, PerfCollective.BROADCAST, 1, ws), t.label() + " broadcast from 1");
            }
            // the control: the job's whole 4-rank ring sums all four ranks, not the two of a sub-communicator
            assertTrue(wrong(bench, whole.raw, PerfCollective.ALL_REDUCE, 0, ws) > 0);
        }
    }

    @Test
    void aSplitRunComparesWithSplitBaselines() throws Exception {
        Path file = tmp.resolve("base.json");
        PerfMainTest.Outcome o = PerfRefusalsTest.perf(Map.of(TestsSplit.SPLIT, "DIV 2"), PerfSplitTest.args(
                "all_reduce -b 4K -e 64K -f 16 -g 4 --backend host -c 1 -n 2 --baseline --json " + file));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        assertTrue(o.out.contains("# Baseline: host ring"), o::toString);
        assertEquals(List.of(0, 0, 1, 1), PerfSplitTest.groups(o), o::toString);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> results = (List<Map<String, Object>>) ((Map<String, Object>) Json.parse(
                Files.readString(file))).get("results");
        assertEquals(2, results.size(), o::toString);
        for (Map<String, Object> r : results) {
            for (String k : new String[] {"out_of_place", "baseline", "primary_only"}) {
                @SuppressWarnings("unchecked")
                Map<String, Object> run = (Map<String, Object>) r.get(k);
                // busbw = algbw x 2(n-1)/n with n = 2 for every side of the comparison
                assertEquals(1.0, (Double) run.get("bus_bw") / (Double) run.get("alg_bw"), 1e-9, k + ": " + r);
            }
            assertTrue((Double) r.get("vs") > 0 && (Double) r.get("prim") > 0, r::toString);
        }
    }

    /**
     * The form that verifies the raw NCCL split on a single GPU (with --backend cuda there): one rank split
     * into a sub-communicator of one. The options are accepted and the baseline runs split, here on the host
     * ring; on CUDA the same plan ({@link RawNcclPlan}) reaches ncclCommSplit.
     */
    @Test
    void oneRankSplitIntoOneIsAcceptedWithTheBaseline() {
        PerfMainTest.Outcome o = PerfRefusalsTest.perf(Map.of(TestsSplit.SPLIT, "AND 0"), PerfSplitTest.args(
                "all_reduce -b 1K -e 4K -f 4 -g 1 --backend host -c 1 -n 2 --baseline"));
        assertEquals(PerfMain.EXIT_OK, o.code, o::toString);
        assertTrue(o.out.contains("# Split: NCCL_TESTS_SPLIT=AND 0 (color = rank & 0x0): 1 sub-communicator of 1 rank"),
                o::toString);
        assertTrue(o.out.contains("# Baseline: host ring"), o::toString);
        assertEquals(List.of(0), PerfSplitTest.groups(o), o::toString);
    }
}
