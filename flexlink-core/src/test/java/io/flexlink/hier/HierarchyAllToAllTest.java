package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * AlltoAll across emulated nodes in two stages: the node's AlltoAll, then rail-aligned exchanges over the
 * peer links. Results are NCCL's exactly (poisoned outputs, in place and not), and the bytes that cross
 * between nodes are exactly the blocks AlltoAll moves between nodes: each rank receives its
 * {@code (N - 1) × L} blocks from other nodes once, and nothing goes over the rails (no gather of
 * everybody's buffer).
 */
class HierarchyAllToAllTest {
    private static long peerBytes(Communicator c) {
        return c.stats().hierarchy().peerBytesReceived();
    }

    private static long railBytes(Communicator c) {
        return c.stats().hierarchy().railBytesReceived();
    }

    private static long interStageBytes(Communicator c) {
        return c.stats().hierarchy().stages().stream().filter(s -> s.path().equals("inter"))
                .mapToLong(CommStats.PathTotals::bytes).sum();
    }

    @ParameterizedTest(name = "{0} nodes × {1}, round-robin {2}")
    @CsvSource({"2, 2, false", "2, 2, true", "3, 2, false", "2, 3, true", "3, 1, false"})
    void eachBlockCrossesBetweenNodesOnceAndTheResultIsExact(int nodes, int perNode, boolean roundRobin)
            throws Exception {
        try (HostBackend backend = new HostBackend(HierarchyThreadsTest.BASE)) {
            Communicator[] comms = HierarchyThreadsTest.make(backend, nodes, perNode, roundRobin);
            int n = comms.length;
            try (CollectiveHarness harness = new CollectiveHarness(backend, comms)) {
                long seed = 100L * nodes + 10L * perNode + (roundRobin ? 1 : 0);
                for (DataType t : new DataType[] {DataType.FLOAT32, DataType.UINT8}) {
                    for (long count : new long[] {1, 777, 5_000}) {
                        for (boolean inPlace : new boolean[] {false, true}) {
                            long[] peersBefore = new long[n];
                            long[] railsBefore = new long[n];
                            long[] interBefore = new long[n];
                            for (int r = 0; r < n; r++) {
                                peersBefore[r] = peerBytes(comms[r]);
                                railsBefore[r] = railBytes(comms[r]);
                                interBefore[r] = interStageBytes(comms[r]);
                            }
                            String what = t + " count " + count + (inPlace ? " in place" : "");
                            CollectiveHarness.Outcome o = harness.run(Collective.ALL_TO_ALL, t, ReduceOp.SUM, count, 0,
                                    inPlace, seed++);
                            assertEquals(0, o.wrong, what + ": " + o.firstErrors);
                            long needed = (long) (nodes - 1) * perNode * count * t.size();
                            for (int r = 0; r < n; r++) {
                                assertEquals(needed, peerBytes(comms[r]) - peersBefore[r], what + ": rank " + r
                                        + " received exactly its blocks from other nodes");
                                assertEquals(0, railBytes(comms[r]) - railsBefore[r], what + ": rank " + r
                                        + "'s rails carried nothing of it");
                                assertEquals(needed, interStageBytes(comms[r]) - interBefore[r], what + ": rank " + r
                                        + "'s inter-node stage counts the same bytes");
                            }
                        }
                    }
                }
            } finally {
                HierarchyThreadsTest.closeAll(comms);
            }
        }
    }
}
