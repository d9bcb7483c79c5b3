package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The staging area's abort word, the idempotent release of every counter, and the stall report. */
class StagingAbortTest {
    private static final StagingLayout LAYOUT = new StagingLayout(3, 2, 4096);
    private static final Duration BOUND = Duration.ofSeconds(10);

    @Test
    void releasingTwiceOrFromEveryRankStillReleasesEveryWait() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            PinnedMemory mem = backend.allocatePinned(LAYOUT.totalBytes());
            Staging[] ranks = {new Staging(LAYOUT, mem, 0), new Staging(LAYOUT, mem, 1), new Staging(LAYOUT, mem, 2)};
            mem.writeCounter(LAYOUT.fullOffset(1, 0), 7);
            mem.writeCounter(LAYOUT.emptyOffset(0, 1, 2), 3);
            for (Staging s : ranks) {
                s.releaseAll(); // each rank of an aborted communicator releases; adding 2^30 four times would wrap
            }
            ranks[0].releaseAll();
            assertAllReleased(mem, 1 << 20);
            // a late write of a released stream lowers a counter; releasing again lifts it past every wait
            mem.writeCounter(LAYOUT.fullOffset(1, 0), 8);
            ranks[2].releaseAll();
            assertAllReleased(mem, 1 << 20);
            mem.close();
        }
    }

    private static void assertAllReleased(PinnedMemory mem, int highestWait) {
        for (int p = 0; p < 3; p++) {
            for (int s = 0; s < 2; s++) {
                assertReleased(mem, LAYOUT.fullOffset(p, s), highestWait);
                for (int j = 0; j < 3; j++) {
                    assertReleased(mem, LAYOUT.emptyOffset(p, s, j), highestWait);
                }
            }
            assertReleased(mem, LAYOUT.localOffset(p), highestWait);
        }
    }

    private static void assertReleased(PinnedMemory mem, long offset, int highestWait) {
        int v = mem.readCounter(offset);
        for (int w = 1; w <= highestWait; w <<= 1) {
            assertTrue(v - w >= 0, "counter at +" + offset + " = " + v + " does not release a wait for " + w);
        }
    }

    @Test
    void theAbortWordNamesTheFirstRankAndCancelsHostWaitsWithRemoteError() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            PinnedMemory mem = backend.allocatePinned(LAYOUT.totalBytes());
            Staging a = new Staging(LAYOUT, mem, 0);
            Staging b = new Staging(LAYOUT, mem, 2);
            assertEquals(-1, a.abortedBy());
            RuntimeStream stream = backend.createStream(0, "waiter");
            stream.waitValue32(mem, LAYOUT.fullOffset(1, 1), 5);
            // the stream blocks on rank 1's counter, which nobody writes
            b.abort();
            a.abort();
            assertEquals(2, a.abortedBy());
            assertEquals(2, b.abortedBy());
            Bounded.idle(stream, BOUND);
            FlexLinkException e = assertThrows(FlexLinkException.class, stream::synchronize);
            assertEquals(Result.REMOTE_ERROR, e.result());
            stream.close();
            mem.close();
        }
    }

    @Test
    void theStallReportNamesTheProducerAndTheConsumerBehind() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            PinnedMemory mem = backend.allocatePinned(LAYOUT.totalBytes());
            Staging s = new Staging(LAYOUT, mem, 0);
            assertNull(s.describeStall());
            RuntimeStream stream = backend.createStream(0, "send");
            // rank 0 sends one empty chunk to rank 1 (slot 0, use 1); rank 2 produced 3 chunks nobody wrote
            s.send(stream, 0, 0, 0, 1L << 1);
            s.advance(0, 1);
            s.advance(2, 3);
            stream.synchronize();
            String d = s.describeStall();
            assertEquals("producer rank 2 full [slot 0: 0<2, 1: 0<1]; consumer rank 1 empty [rank 0's slot 0: 0<1]", d);
            mem.writeCounter(LAYOUT.emptyOffset(0, 0, 1), 1);
            mem.writeCounter(LAYOUT.fullOffset(2, 0), 2);
            mem.writeCounter(LAYOUT.fullOffset(2, 1), 1);
            assertNull(s.describeStall());
            stream.close();
            mem.close();
        }
    }
}
