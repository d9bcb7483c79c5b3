package io.flexlink.api;

import static io.flexlink.api.SplitTest.closeAll;
import static io.flexlink.api.SplitTest.everyCollectiveExact;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link FlexLink#initRankScalable}, NCCL's ncclCommInitRankScalable: ranks given several ids meet at the first
 * (FlexLink's rendezvous is one server) and make a full communicator; NCCL's checks on the ids, each naming them.
 */
class ScalableInitTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "3")
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();

    @Test
    void ranksGivenSeveralIdsMeetAtTheFirst() throws Exception {
        UniqueId[] ids = {FlexLink.getUniqueId(), FlexLink.getUniqueId()};
        assertSame(ids[0], FlexLink.scalableRendezvous(ids, 3));
        try (HostBackend backend = new HostBackend(CONFIG)) {
            ExecutorService pool = Executors.newFixedThreadPool(3);
            Communicator[] comms = new Communicator[3];
            try {
                List<Future<Communicator>> fs = new ArrayList<>();
                for (int r = 0; r < 3; r++) {
                    int rank = r;
                    fs.add(pool.submit(() -> FlexLink.initRankScalable(backend, CONFIG, 3, ids.clone(), rank, rank)));
                }
                for (int r = 0; r < 3; r++) {
                    comms[r] = fs.get(r).get(2, TimeUnit.MINUTES); // a hang guard only
                    assertEquals(r, comms[r].rank());
                }
            } finally {
                pool.shutdownNow();
            }
            everyCollectiveExact(backend, comms, "made from two ids", 17);
            closeAll(comms);
        }
    }

    @Test
    void badIdListsAreInvalidArgumentsNamingThem() {
        UniqueId id = FlexLink.getUniqueId();
        Object[][] bad = {{null, 2, "commIds: null"}, {new UniqueId[0], 2, "nId: 0 ids is not in [1, nranks = 2]"},
            {new UniqueId[] {id, id, id}, 2, "nId: 3 ids"}, {new UniqueId[] {id, null}, 2, "commIds[1]: null"}};
        try (HostBackend backend = new HostBackend(CONFIG)) {
            for (Object[] b : bad) {
                FlexLinkException e = assertThrows(FlexLinkException.class, () -> FlexLink.initRankScalable(backend,
                        CONFIG, (int) b[1], (UniqueId[]) b[0], 0, 0));
                assertEquals(Result.INVALID_ARGUMENT, e.result());
                assertTrue(e.getMessage().contains((String) b[2]), e.getMessage());
            }
            assertEquals(0, backend.liveBytes(), "nothing was made");
        }
    }
}
