package io.flexlink.hier;

import static io.flexlink.hier.HierarchySplitTest.exact;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Shrink, finalize and revoke of a multi-node communicator (emulated nodes by thread): a shrunk child spanning
 * both nodes is hierarchical and exact; finalize leaves only close; revoke stops the work and, because that ends
 * the job's rendezvous, refuses a later shrink (abortFirst too), with NCCL's codes throughout.
 */
class HierarchyEndsTest {
    private static void refused(Result result, Executable call) {
        FlexLinkException e = assertThrows(FlexLinkException.class, call);
        assertEquals(result, e.result(), e.getMessage());
    }

    private static void allReduceRefused(HostBackend backend, Communicator c) {
        try (CollectiveHarness h = new CollectiveHarness(backend, new Communicator[] {c})) {
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> CollectiveHarness.enqueue(
                    Collective.ALL_REDUCE, c, 0, 0, 1, DataType.FLOAT32, ReduceOp.SUM, 0, h.stream(0)));
            assertEquals(Result.INVALID_USAGE, e.result(), e.getMessage());
        }
    }

    @Test
    void shrinkFinalizeAndRevokeOfAMultiNodeCommunicator() throws Exception {
        try (HostBackend backend = new HostBackend(HierarchyThreadsTest.BASE)) {
            // three nodes of one rank each: a shrink keeps every node's rank count equal, as a hierarchy needs
            Communicator[] world = HierarchyThreadsTest.make(backend, 3, 1, false);
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<Communicator> kept = new ArrayList<>();
            try {
                List<Future<Optional<Communicator>>> fs = new ArrayList<>();
                for (Communicator c : world) {
                    fs.add(pool.submit(() -> c.shrink(new int[] {2})));
                }
                for (int r = 0; r < 3; r++) {
                    Optional<Communicator> c = fs.get(r).get(2, TimeUnit.MINUTES); // a hang guard only
                    assertEquals(r != 2, c.isPresent(), "rank " + r);
                    c.ifPresent(kept::add);
                }
            } finally {
                pool.shutdownNow();
            }
            Communicator[] child = kept.toArray(new Communicator[0]);
            for (int i = 0; i < 2; i++) {
                assertEquals(i, child[i].rank());
            }
            assertInstanceOf(HierarchicalCommunicator.class, child[0], "ranks of both nodes");
            exact(backend, child, "shrunk across the nodes");
            for (Communicator c : child) {
                refused(Result.INVALID_USAGE, () -> c.shrink(new int[] {0}, true));
            }
            for (Communicator c : child) {
                c.revoke(); // also where the first's revoke already broke this rank's rail: that is what it is for
            }
            for (Communicator c : child) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (c.getAsyncError() == Result.IN_PROGRESS) {
                    assertTrue(System.nanoTime() < deadline, "the revoke never finished");
                    Thread.onSpinWait();
                }
                assertEquals(Result.SUCCESS, c.getAsyncError());
                allReduceRefused(backend, c);
                refused(Result.INVALID_ARGUMENT, c::revoke);
                refused(Result.INVALID_ARGUMENT, c::finalizeComm);
                refused(Result.INVALID_USAGE, () -> c.shrink(new int[] {0}));
                c.close();
            }
            exact(backend, world, "the parent after its child's revoke");
            for (Communicator c : world) {
                c.finalizeComm();
            }
            for (Communicator c : world) {
                assertEquals(Result.SUCCESS, c.getAsyncError());
                allReduceRefused(backend, c);
                refused(Result.INVALID_ARGUMENT, c::finalizeComm);
                refused(Result.INVALID_ARGUMENT, c::revoke);
                refused(Result.INVALID_USAGE, () -> c.split(0, 0));
                c.close();
                refused(Result.INVALID_USAGE, c::finalizeComm);
            }
        }
    }
}
