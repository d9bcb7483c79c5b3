package io.flexlink.api;

import static io.flexlink.api.SplitTest.closeAll;
import static io.flexlink.api.SplitTest.everyCollectiveExact;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link Communicator#growId()} and {@link Communicator#grow}, NCCL's ncclCommGetUniqueId and ncclCommGrow: the
 * existing ranks keep their ranks, the new ranks join with initRank over the root's id, the grown communicator is
 * exact over its own paths and the old one still works; one id at a time; bad input refused with INVALID_ARGUMENT
 * naming it (on every rank where it is only known after the round).
 */
class GrowTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "4")
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();

    private static List<Future<Communicator>> all(ExecutorService pool, List<Callable<Communicator>> calls) {
        List<Future<Communicator>> fs = new ArrayList<>();
        for (Callable<Communicator> c : calls) {
            fs.add(pool.submit(c));
        }
        return fs;
    }

    @Test
    void existingRanksKeepTheirRanksAndNewRanksJoin() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
            UniqueId id = world[0].growId();
            FlexLinkException twice = assertThrows(FlexLinkException.class, world[0]::growId);
            assertEquals(Result.INVALID_USAGE, twice.result(), "one unconsumed id at a time: " + twice.getMessage());
            ExecutorService pool = Executors.newFixedThreadPool(4);
            Communicator[] grown = new Communicator[4];
            try {
                List<Future<Communicator>> fs = all(pool, List.of(() -> world[0].grow(4, id),
                        () -> world[1].grow(4, null), () -> FlexLink.initRank(backend, CONFIG, 4, id, 2, 2),
                        () -> FlexLink.initRank(backend, CONFIG, 4, id, 3, 3)));
                for (int r = 0; r < 4; r++) {
                    grown[r] = fs.get(r).get(2, TimeUnit.MINUTES); // a hang guard only
                    assertEquals(r, grown[r].rank(), "existing ranks keep theirs, new ranks take theirs");
                    assertEquals(4, grown[r].size());
                    assertEquals(r, grown[r].device());
                }
            } finally {
                pool.shutdownNow();
            }
            everyCollectiveExact(backend, grown, "grown", 71);
            everyCollectiveExact(backend, world, "the communicator it grew from", 73);
            assertTrue(world[0].growId() != null, "the grow consumed the id: the next may be made");
            closeAll(world); // independent of each other
            everyCollectiveExact(backend, grown, "grown, its parent closed", 79);
            closeAll(grown);
        }
    }

    @Test
    void badGrowsAreRefusedNamingTheArgument() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
            UniqueId id = FlexLink.getUniqueIdForProcesses(CONFIG);
            FlexLinkException small = assertThrows(FlexLinkException.class, () -> world[0].grow(2, id));
            assertEquals(Result.INVALID_ARGUMENT, small.result());
            assertTrue(small.getMessage().contains("nRanks: 2 is not more than the 2 ranks"), small.getMessage());
            String[][] cases = {{"none", "uniqueId: no rank passed one"}, {"both", "both passed one"}};
            for (String[] c : cases) {
                ExecutorService pool = Executors.newFixedThreadPool(2);
                try {
                    UniqueId second = c[0].equals("both") ? id : null;
                    List<Future<Communicator>> fs = all(pool, List.of(() -> world[0].grow(3, second),
                            () -> world[1].grow(3, second)));
                    for (Future<Communicator> f : fs) {
                        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(2, TimeUnit.MINUTES));
                        FlexLinkException x = assertInstanceOf(FlexLinkException.class, e.getCause());
                        assertEquals(Result.INVALID_ARGUMENT, x.result());
                        assertTrue(x.getMessage().contains(c[1]), x.getMessage());
                    }
                } finally {
                    pool.shutdownNow();
                }
            }
            FlexLink.groupStart();
            FlexLinkException grouped = assertThrows(FlexLinkException.class, () -> world[0].grow(3, id));
            FlexLink.groupEnd();
            assertEquals(Result.INVALID_USAGE, grouped.result(), grouped.getMessage());
            everyCollectiveExact(backend, world, "after the refusals", 83);
            closeAll(world);
        }
    }
}
