package io.flexlink.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RowRuns;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.PathStreams;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * A rank between others sends its pieces for the consumers after it and before it, and reads its rows from the
 * producers on either side of it, as two runs of rows each: the staged path hands both to its stream as one
 * {@code copyRowRuns} (one {@code cudaMemcpy3DBatchAsync} on CUDA), in calls the launcher found uncaptured,
 * and every element still arrives. A call whose stream is being captured into a graph keeps a copy per run: CUDA
 * has no graph node for a batch of copies.
 */
class StagedRowRunsTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie")
            .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "64K")
            .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TUNING_CACHE, "off").build();

    @Test
    void aMiddleRanksPiecesAndRowsGoOutAsOneOperationOfTwoRuns() {
        Map<String, Long> ops = rankThreesOperations(false);
        long chunks = ops.getOrDefault("pcie.recv reduceRows", 0L);
        assertTrue(chunks > 1, "several chunks: " + ops);
        assertEquals(chunks, batches(ops, "pcie.send"), "each chunk's contributions: one operation of their runs of "
                + "pieces (a short last piece makes a run of its own): " + ops);
        assertEquals(0L, ops.getOrDefault("pcie.send copyRows", 0L), "no piece goes alone: " + ops);
        assertEquals(2 * chunks, batches(ops, "pcie.recv"), "each chunk's contributions and its results, each one "
                + "operation over the producers on either side: " + ops);
        assertEquals(0L, ops.getOrDefault("pcie.recv copyRowsFromHost", 0L), "no row read alone: " + ops);
    }

    @Test
    void aCallWhoseStreamIsBeingCapturedKeepsACopyPerRun() {
        Map<String, Long> ops = rankThreesOperations(true);
        assertEquals(0, batches(ops, "pcie.send") + batches(ops, "pcie.recv"), "no batch of copies: " + ops);
        long chunks = ops.getOrDefault("pcie.recv reduceRows", 0L);
        assertTrue(chunks > 1, "several chunks: " + ops);
        assertTrue(ops.getOrDefault("pcie.send copyRows", 0L) >= 2 * chunks, "two runs of pieces a chunk: " + ops);
        assertTrue(ops.getOrDefault("pcie.recv copyRowsFromHost", 0L) >= 4 * chunks, "two runs of rows for the "
                + "contributions and two for the results: " + ops);
    }

    /**
     * What rank 3 of 8 (one device, the PCIe path alone) enqueues on its path streams in one AllReduce, by stream
     * and operation, once every element arrived; {@code captured}: the callers' streams say they are being captured
     * (the host backend runs the call all the same), so the launcher plans a captured call.
     */
    private static Map<String, Long> rankThreesOperations(boolean captured) {
        Map<String, Long> ops = new ConcurrentHashMap<>();
        try (HostBackend host = new HostBackend(CONFIG)) {
            PathStreams traced = new PathStreams(captured ? new io.flexlink.testing.CapturingCallers(host) : host,
                    PathStreams.Mode.COUNT);
            traced.listen((label, m, a) -> {
                if (label.endsWith(".r3")) {
                    String what = m.getName().equals("copyRowRuns") ? "copyRowRuns(" + ((RowRuns) a[0]).size() + ")"
                            : m.getName();
                    ops.merge(label.substring(0, label.length() - 3) + " " + what, 1L, Long::sum);
                }
            });
            Communicator[] comms = FlexLink.initAll(traced, CONFIG, new int[8]);
            try (CollectiveHarness h = new CollectiveHarness(traced, comms)) {
                CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.INT32, ReduceOp.SUM, 80_000, 0,
                        false, 11);
                assertEquals(0, o.wrong, o.toString());
                assertTrue(o.bytes("pcie") > 0, o.toString());
            } finally {
                for (Communicator comm : comms) {
                    comm.close();
                }
            }
        }
        return ops;
    }

    /** {@code copyRowRuns} of two runs or more on {@code lane}. */
    private static long batches(Map<String, Long> ops, String lane) {
        return ops.entrySet().stream().filter(e -> e.getKey().startsWith(lane + " copyRowRuns("))
                .mapToLong(Map.Entry::getValue).sum();
    }
}
