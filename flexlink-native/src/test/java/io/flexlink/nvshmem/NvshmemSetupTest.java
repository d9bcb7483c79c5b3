package io.flexlink.nvshmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.UniqueId;
import io.flexlink.bootstrap.InProcessRendezvous;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.path.PathContext;
import io.flexlink.path.StagedPath;
import io.flexlink.runtime.RankDevices;
import io.flexlink.runtime.RankExchange;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.sync.EnqueueBudget;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The collective decisions of {@link NvshmemSetup}, which every rank must reach alike. */
class NvshmemSetupTest {
    private static String state(String process, String session, int device) {
        return process + "|" + session + "|" + device + "|";
    }

    private static final String NONE = "-|-1|-1|-1";

    @Test
    void separateProcessesWithoutNvshmemInitialize() {
        assertEquals(NvshmemSetup.INIT, NvshmemSetup.decide(new String[] {state("a", NONE, 0), state("b", NONE, 1)}, 2));
        assertEquals(NvshmemSetup.INIT, NvshmemSetup.decide(new String[] {state("a", NONE, 0)}, 1));
    }

    @Test
    void ranksSharingAProcessAreRefused() {
        String d = NvshmemSetup.decide(new String[] {state("a", NONE, 0), state("b", NONE, 0), state("a", NONE, 1)}, 3);
        assertTrue(d.contains("ranks 0 and 2 share one process"), d);
        assertEquals(d, NvshmemSetup.sharedProcess(new String[] {"a", "b", "a"}));
        assertEquals(null, NvshmemSetup.sharedProcess(new String[] {"a", "b", "c"}));
    }

    /**
     * Two ranks that are threads of one process (a TCP id joined by threads, as the facade's ncclGetUniqueId
     * allows): both learn it in the first round and go without the path, neither holding the process's setup
     * lock while it waits for the other (which hung both until the exchange's timeout).
     */
    @Test
    void ranksThatAreThreadsOfOneProcessTurnThePathOffWithoutWaiting() throws Exception {
        FlexLinkConfig config = FlexLinkConfig.builder().build();
        String token = UniqueId.random().token();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (HostBackend backend = new HostBackend(config)) {
            List<Future<StagedPath>> paths = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                paths.add(pool.submit(() -> {
                    RankExchange ex = InProcessRendezvous.join(token, 2, rank, Duration.ofSeconds(60));
                    return NvshmemSetup.create(new PathContext(backend, config, ex,
                            (purpose, bytes, placement, init) -> {
                                throw new AssertionError("no memory is made");
                            }, rank, RankDevices.of(backend, new int[] {0, 0}), EnqueueBudget.ONE_RANK_PER_THREAD));
                }));
            }
            for (Future<StagedPath> p : paths) {
                assertEquals(null, p.get(20, TimeUnit.SECONDS), "no path: one process");
            }
        } finally {
            pool.shutdownNow();
            InProcessRendezvous.leave(token);
            InProcessRendezvous.leave(token);
        }
    }

    @Test
    void aSessionOverTheSameRanksIsReused() {
        String[] s = {state("a", "77|0|2|0", 0), state("b", "77|1|2|3", 3)};
        assertEquals(NvshmemSetup.REUSE, NvshmemSetup.decide(s, 2));
    }

    @Test
    void aSessionOverOtherRanksOrDevicesIsRefused() {
        String d = NvshmemSetup.decide(new String[] {state("a", "77|0|1|0", 0), state("b", NONE, 0)}, 2);
        assertTrue(d.contains("rank 0's process already runs NVSHMEM as PE 0 of 1"), d);
        d = NvshmemSetup.decide(new String[] {state("a", "77|1|2|0", 0), state("b", "77|0|2|0", 0)}, 2);
        assertTrue(d.contains("already runs NVSHMEM"), d);
        d = NvshmemSetup.decide(new String[] {state("a", "77|0|1|2", 0)}, 1);
        assertTrue(d.contains("runs NVSHMEM on device 2, the communicator uses device 0"), d);
    }

    @Test
    void aBrokenProcessTurnsThePathOffEverywhere() {
        String d = NvshmemSetup.decide(new String[] {state("a", NONE, 0), "b|" + NONE + "|0|init hung | twice"}, 2);
        assertEquals("rank 1: init hung | twice", d);
    }

    @Test
    void onlyBuffersRetiredOnEveryRankAreFreed() {
        byte[][] all = {longs(1, 3, 4, 9), longs(3, 9), longs(0, 3, 4, 9)};
        assertEquals(List.of(3L, 9L), NvshmemSetup.commonIds(all));
        assertEquals(List.of(), NvshmemSetup.commonIds(new byte[][] {longs(1), longs()}));
    }

    @Test
    void theStagingLayoutIsAligned() {
        assertEquals(256, NvshmemChannel.signalBytes(1, 2));
        assertEquals(1024, NvshmemChannel.signalBytes(8, 8));
        // 3 ranks, 2 slots of 1000 B (stride 1024): signals + 2 send slots + 3 x 2 receive slots
        assertEquals(256 + 8 * 1024, NvshmemChannel.totalBytes(3, 2, 1000));
    }

    private static byte[] longs(long... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 8);
        for (long x : v) {
            b.putLong(x);
        }
        return b.array();
    }
}
