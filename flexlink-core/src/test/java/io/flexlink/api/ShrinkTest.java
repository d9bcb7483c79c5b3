package io.flexlink.api;

import static io.flexlink.api.SplitTest.closeAll;
import static io.flexlink.api.SplitTest.everyCollectiveExact;
import static io.flexlink.api.SplitTest.parentRanksInChildOrder;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * {@link Communicator#shrink}, NCCL's ncclCommShrink built on split: the kept ranks in their order (the gaps
 * closed), a full communicator with exact results over its own paths, no child on the excluded ranks, bad lists
 * refused with INVALID_ARGUMENT naming {@code excluded} before anything happens (different lists: on every rank),
 * and NCCL_SHRINK_ABORT revoking the parent first.
 */
class ShrinkTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder()
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();

    /** Every rank shrinks on a thread of its own with the list {@code excluded} gives it. */
    @SuppressWarnings("unchecked")
    static Future<Optional<Communicator>>[] shrinkAsync(ExecutorService pool, Communicator[] parents,
                                                        IntFunction<int[]> excluded, boolean abortFirst) {
        Future<Optional<Communicator>>[] fs = new Future[parents.length];
        for (int r = 0; r < parents.length; r++) {
            int rank = r;
            fs[r] = pool.submit(() -> parents[rank].shrink(excluded.apply(rank), abortFirst));
        }
        return fs;
    }

    /** The children, by child rank, of the ranks not in {@code excluded}; checks the excluded ones got none. */
    static Communicator[] shrink(Communicator[] parents, int[] excluded, boolean abortFirst) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(parents.length);
        try {
            Future<Optional<Communicator>>[] fs = shrinkAsync(pool, parents, r -> excluded, abortFirst);
            List<Communicator> kept = new ArrayList<>();
            for (int r = 0; r < parents.length; r++) {
                Optional<Communicator> c = fs[r].get(2, TimeUnit.MINUTES); // a hang guard only
                int rank = parents[r].rank();
                boolean out = java.util.Arrays.stream(excluded).anyMatch(x -> x == rank);
                assertEquals(out, c.isEmpty(), "rank " + r + (out ? " is excluded" : " is kept"));
                c.ifPresent(kept::add);
            }
            Communicator[] byRank = new Communicator[kept.size()];
            for (int i = 0; i < byRank.length; i++) {
                Communicator c = kept.get(i);
                assertEquals(kept.size(), c.size());
                assertEquals(i, c.rank(), "the kept ranks in their order, the gaps closed");
                byRank[c.rank()] = c;
            }
            return byRank;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theKeptRanksFormAFullCommunicatorInTheirOrder() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3, 4);
            Communicator[] kids = shrink(world, new int[] {3, 1}, false);
            assertEquals(3, kids.length);
            int[] parents = {0, 2, 4};
            for (int i = 0; i < 3; i++) {
                assertEquals(parents[i], kids[i].device(), "child " + i + " on its parent's device");
            }
            assertArrayEquals(parents, parentRanksInChildOrder(backend, kids, parents));
            everyCollectiveExact(backend, kids, "shrunk", 31);
            // the parent is untouched: it still runs, and shrinks again
            everyCollectiveExact(backend, world, "parent after the shrink", 37);
            Communicator[] again = shrink(world, new int[] {0}, false);
            everyCollectiveExact(backend, again, "shrunk again", 41);
            closeAll(world); // children are independent of their parent
            everyCollectiveExact(backend, kids, "shrunk, parent closed", 43);
            closeAll(kids);
            closeAll(again);
            assertEquals(0, backend.liveBytes());
        }
    }

    @Test
    void abortFirstRevokesTheParentThenShrinks() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2);
            Communicator[] kids = shrink(world, new int[] {2}, true);
            everyCollectiveExact(backend, kids, "shrunk with abortFirst", 51);
            for (Communicator c : world) {
                assertEquals(Result.SUCCESS, c.getAsyncError(), "revoked and quiescent");
                FlexLinkException e = assertThrows(FlexLinkException.class, c::revoke);
                assertEquals(Result.INVALID_ARGUMENT, e.result(), "revoked by the shrink already: " + e.getMessage());
            }
            closeAll(kids);
            closeAll(world);
        }
    }

    @Test
    void badListsAreRefusedNamingExcludedAndChangeNothing() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2);
            Object[][] bad = {{null, "null"}, {new int[0], "empty"}, {new int[] {3}, "rank 3 is not in [0, 3)"},
                {new int[] {-1}, "rank -1"}, {new int[] {1, 1}, "rank 1 twice"}, {new int[] {0, 1, 2}, "every rank"}};
            for (Object[] b : bad) {
                FlexLinkException e = assertThrows(FlexLinkException.class, () -> world[0].shrink((int[]) b[0]));
                assertEquals(Result.INVALID_ARGUMENT, e.result());
                assertTrue(e.getMessage().contains(": excluded: ") && e.getMessage().contains((String) b[1]),
                        e.getMessage());
            }
            FlexLink.groupStart();
            FlexLinkException grouped = assertThrows(FlexLinkException.class, () -> world[0].shrink(new int[] {1}));
            FlexLink.groupEnd();
            assertEquals(Result.INVALID_USAGE, grouped.result(), grouped.getMessage());
            // ranks that disagree on the list: every rank is told, naming a rank that differs
            ExecutorService pool = Executors.newFixedThreadPool(3);
            try {
                Future<Optional<Communicator>>[] fs = shrinkAsync(pool, world, r -> r == 2 ? new int[] {0}
                        : new int[] {2}, false);
                for (Future<Optional<Communicator>> f : fs) {
                    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(2, TimeUnit.MINUTES));
                    FlexLinkException x = assertInstanceOf(FlexLinkException.class, e.getCause());
                    assertEquals(Result.INVALID_ARGUMENT, x.result());
                    assertTrue(x.getMessage().contains("every rank must exclude the same ranks"), x.getMessage());
                }
            } finally {
                pool.shutdownNow();
            }
            // nothing changed: the parent still runs and shrinks
            everyCollectiveExact(backend, world, "after the refusals", 61);
            Communicator[] kids = shrink(world, new int[] {1}, false);
            everyCollectiveExact(backend, kids, "shrunk after the refusals", 67);
            closeAll(kids);
            world[0].close();
            FlexLinkException closed = assertThrows(FlexLinkException.class, () -> world[0].shrink(new int[] {1}));
            assertEquals(Result.INVALID_USAGE, closed.result(), closed.getMessage());
            closeAll(world);
        }
    }
}
