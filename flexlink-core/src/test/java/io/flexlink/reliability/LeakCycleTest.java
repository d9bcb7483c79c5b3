package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * 1000 create / run / close cycles of a 2-rank communicator (host ring + PCIe path, watchdog on; every
 * tenth cycle aborted before it is closed): off-heap memory (device and pinned), streams and threads
 * come back to where they were, checked every 100 cycles and at the end, with bounded waits for the
 * threads that are on their way out.
 */
class LeakCycleTest {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final int CYCLES = 1000;

    @Test
    void thousandCreateRunCloseCycles() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TIMEOUT, "30s")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        int flexThreads = Bounded.flexlinkThreads().size();
        int jvmThreads = mx.getThreadCount();
        long start = System.nanoTime();
        try (HostBackend backend = new HostBackend(config)) {
            RankCheck[] ranks = new RankCheck[2];
            Communicator[] probe = FlexLink.initAll(backend, config, 0, 1);
            for (int r = 0; r < 2; r++) {
                ranks[r] = new RankCheck(backend, probe[r], "user.r" + r, 4096); // buffers and streams kept
            }
            for (Communicator c : probe) {
                c.close();
            }
            long buffers = backend.liveBytes();
            int userStreams = backend.liveStreams();
            int peakThreads = 0;
            for (int i = 1; i <= CYCLES; i++) {
                Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
                for (int r = 0; r < 2; r++) {
                    ranks[r].rebind(comms[r]);
                }
                // both ranks' parts are enqueued before either waits, as one thread driving two GPUs would
                long wrong = RankCheck.runAll(ranks, Collective.values()[i % 5], DataType.FLOAT32, ReduceOp.SUM,
                        2048 + i % 97, i % 2, i);
                assertEquals(0, wrong, "cycle " + i);
                peakThreads = Math.max(peakThreads, Bounded.flexlinkThreads().size());
                if (i % 10 == 0) {
                    comms[0].abort();
                    comms[1].abort();
                }
                for (Communicator c : comms) {
                    c.close();
                }
                if (i % 100 == 0 || i == CYCLES) {
                    int cycle = i;
                    assertEquals(buffers, backend.liveBytes(), () -> "off-heap bytes after cycle " + cycle);
                    assertEquals(userStreams, backend.liveStreams(), () -> "streams after cycle " + cycle);
                    Bounded.threadsBackTo(flexThreads + userStreams, BOUND);
                }
            }
            for (RankCheck r : ranks) {
                r.close();
            }
            assertEquals(0, backend.liveBytes());
            assertEquals(0, backend.liveStreams());
            System.out.printf("leak cycles: %d in %.1f s, peak %d FlexLink threads, JVM threads %d before%n",
                    CYCLES, (System.nanoTime() - start) / 1e9, peakThreads, jvmThreads);
        }
        Bounded.threadsBackTo(flexThreads, BOUND);
        Bounded.within(BOUND, () -> mx.getThreadCount() <= jvmThreads,
                () -> "JVM threads " + mx.getThreadCount() + " > " + jvmThreads + " before the cycles");
        assertTrue(mx.getThreadCount() <= jvmThreads);
        System.out.printf("leak cycles: JVM threads %d after (%d before)%n", mx.getThreadCount(), jvmThreads);
    }
}
