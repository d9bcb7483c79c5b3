package io.flexlink.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Split calls whose auxiliary part the communicator's enqueue thread enqueues ({@code flexlink.enqueueThread=on}):
 * each is handed over when it is planned and joined (events the thread recorded) in the join stage, through a ring
 * of plans.
 */
class EnqueueThreadTest {
    private static final Duration BOUND = Duration.ofSeconds(30);

    private static FlexLinkConfig config() {
        return FlexLinkConfig.builder().set(FlexLinkConfig.ENQUEUE_THREAD, "on")
                .set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, "pcie=0.4")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    private static int[] devices(int n) {
        int[] d = new int[n];
        for (int r = 0; r < n; r++) {
            d[r] = r;
        }
        return d;
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3})
    void everyCollectiveIsRightAndSplit(int n) {
        try (HostBackend backend = new HostBackend(config())) {
            Communicator[] comms = FlexLink.initAll(backend, config(), devices(n));
            assertTrue(Thread.getAllStackTraces().keySet().stream()
                    .anyMatch(t -> t.getName().equals("flexlink-enqueue-r" + (n - 1))), "each rank has its enqueue thread");
            try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                long seed = 5;
                for (Collective c : Collective.collectives()) {
                    for (boolean inPlace : new boolean[] {false, true}) {
                        CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 9_001, 1, inPlace, seed++);
                        assertEquals(0, o.wrong, c + (inPlace ? " in place" : "") + ": " + o);
                        assertTrue(o.bytes("pcie") > 0, c + " was split onto the PCIe path: " + o);
                    }
                }
            }
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    /** 200 calls back to back, never synchronized in between: the ring of plans wraps many times. */
    @Test
    void aDeepQueueOfCallsWrapsTheRingOfJoinWords() throws Exception {
        int n = 2;
        int count = 4_096;
        int calls = 200;
        try (HostBackend backend = new HostBackend(config())) {
            Communicator[] comms = FlexLink.initAll(backend, config(), devices(n));
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] x = new DeviceMemory[n];
            int[][] input = new int[n][count];
            SplittableRandom random = new SplittableRandom(77);
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                x[r] = backend.allocate(r, 4L * count);
                ByteBuffer b = ByteBuffer.allocateDirect(4 * count).order(ByteOrder.nativeOrder());
                for (int i = 0; i < count; i++) {
                    input[r][i] = random.nextInt(1000);
                    b.putInt(4 * i, input[r][i]);
                }
                backend.upload(x[r].address(), b);
            }
            Thread[] threads = new Thread[n];
            for (int r = 0; r < n; r++) {
                int rank = r;
                threads[r] = new Thread(() -> {
                    for (int k = 0; k < calls; k++) { // in place: each call doubles what the last one left
                        comms[rank].allReduce(x[rank].address(), x[rank].address(), count, DataType.INT32,
                                k == 0 ? ReduceOp.SUM : ReduceOp.AVG, streams[rank]);
                    }
                }, "rank" + r);
                threads[r].start();
            }
            for (Thread t : threads) {
                t.join(BOUND.toMillis());
            }
            for (int r = 0; r < n; r++) {
                Bounded.idle(streams[r], BOUND);
                ByteBuffer b = ByteBuffer.allocateDirect(4 * count).order(ByteOrder.nativeOrder());
                backend.download(b, x[r].address());
                for (int i = 0; i < count; i++) {
                    // the first call sums; every AVG of equal inputs keeps the sum
                    assertEquals(input[0][i] + input[1][i], b.getInt(4 * i), "rank " + r + " element " + i);
                }
            }
            long pcie = comms[0].stats().paths().stream().filter(p -> p.path().equals("pcie"))
                    .mapToLong(p -> p.bytes()).sum();
            assertTrue(pcie >= (long) calls * count * 4 / 4, "every call crossed the PCIe path: " + pcie);
            for (int r = 0; r < n; r++) {
                comms[r].close();
                streams[r].close();
                x[r].close();
            }
            assertEquals(0, backend.liveBytes(), "everything freed");
        }
    }

    /** A peer that never calls: the abort releases the caller's stream, and close after abort frees everything. */
    @Test
    void anAbortReleasesTheCallersJoinAndCloseFreesEverything() {
        try (HostBackend backend = new HostBackend(config())) {
            Communicator[] comms = FlexLink.initAll(backend, config(), devices(2));
            RuntimeStream s = backend.createStream(0, "user0");
            DeviceMemory m = backend.allocate(0, 4L * 8_192);
            comms[0].allReduce(m.address(), m.address(), 8_192, DataType.FLOAT32, ReduceOp.SUM, s);
            assertTrue(!s.isIdle(), "rank 1 never calls: rank 0's join waits");
            comms[0].abort();
            Bounded.idle(s, BOUND);
            comms[0].close();
            comms[1].abort();
            comms[1].close();
            s.close();
            m.close();
            assertEquals(0, backend.liveBytes(), "the thread's events and everything else freed");
        }
    }
}
