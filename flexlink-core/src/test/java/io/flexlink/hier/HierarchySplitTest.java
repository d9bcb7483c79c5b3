package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Splitting a multi-node communicator (emulated nodes by thread): a child whose ranks span nodes is
 * hierarchical itself, a child inside one node is a single-node FlexLink communicator over that node's
 * paths; both give exact results for every collective.
 */
class HierarchySplitTest {
    /** Every rank splits on its own thread; returns the children of {@code color} by child rank. */
    static Communicator[] split(Communicator[] parents, IntUnaryOperator color, int wanted) throws Exception {
        int n = parents.length;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<Optional<Communicator>>> fs = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                fs.add(pool.submit(() -> parents[rank].split(color.applyAsInt(rank), rank)));
            }
            List<Communicator> mine = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                Optional<Communicator> c = fs.get(r).get(2, TimeUnit.MINUTES); // a hang guard only
                assertEquals(color.applyAsInt(r) >= 0, c.isPresent(), "rank " + r);
                if (color.applyAsInt(r) == wanted) {
                    mine.add(c.orElseThrow());
                }
            }
            Communicator[] out = new Communicator[mine.size()];
            for (Communicator c : mine) {
                out[c.rank()] = c;
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    static void exact(HostBackend backend, Communicator[] comms, String what) {
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            for (Collective c : Collective.collectives()) {
                CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 9_001, 1, false, 21);
                assertEquals(0, o.wrong, what + " " + c + ": " + o);
            }
        }
    }

    @Test
    void childrenAcrossNodesAreHierarchicalAndChildrenInsideANodeAreNot() throws Exception {
        try (HostBackend backend = new HostBackend(HierarchyThreadsTest.BASE)) {
            Communicator[] world = HierarchyThreadsTest.make(backend, 2, 2, false); // node a: 0, 1; node b: 2, 3
            // one local index across both nodes: a rail-shaped child of 2 nodes × 1 rank
            Communicator[] across = split(world, r -> r % 2, 0);
            assertEquals(2, across.length);
            assertInstanceOf(HierarchicalCommunicator.class, across[0]);
            exact(backend, across, "across the nodes");
            // node b's two ranks: one node, so FlexLink's own paths
            Communicator[] inside = split(world, r -> r / 2 == 1 ? 5 : Communicator.SPLIT_NOCOLOR, 5);
            assertEquals(2, inside.length);
            assertFalse(inside[0] instanceof HierarchicalCommunicator, inside[0].toString());
            assertEquals(2, inside[0].device());
            try (CollectiveHarness h = new CollectiveHarness(backend, inside)) {
                CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.INT32, ReduceOp.SUM, 20_000, 0,
                        false, 3);
                assertEquals(0, o.wrong, o.toString());
                assertTrue(o.bytes("pcie") > 0 && o.bytes("primary") > 0, "the node's own paths: " + o);
            }
            exact(backend, inside, "inside node b");
            HierarchyThreadsTest.closeAll(across);
            HierarchyThreadsTest.closeAll(inside);
            exact(backend, world, "the parent after its children closed");
            HierarchyThreadsTest.closeAll(world);
        }
    }
}
