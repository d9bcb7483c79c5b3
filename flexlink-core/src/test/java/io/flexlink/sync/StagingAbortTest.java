package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.AlternatingScratch;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The staging area's abort word, the idempotent release of every handshake word, and the stall report. */
class StagingAbortTest {
    private static final StagingLayout LAYOUT = new StagingLayout(3, 2, 4096);
    private static final Duration BOUND = Duration.ofSeconds(10);

    private static Staging staging(HostBackend backend, PinnedMemory mem, int rank) {
        return new Staging(LAYOUT, mem, rank, new AlternatingScratch(backend, 0, true));
    }

    @Test
    void releasingTwiceOrFromEveryRankStillReleasesEveryWait() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            PinnedMemory mem = backend.allocatePinned(LAYOUT.totalBytes());
            LAYOUT.initialize(mem);
            Staging[] ranks = {staging(backend, mem, 0), staging(backend, mem, 1), staging(backend, mem, 2)};
            mem.writeCounter(LAYOUT.flagOffset(1, 0, 2), Flags.FULL);
            for (Staging s : ranks) {
                s.releaseAll(); // each rank of an aborted communicator releases
            }
            ranks[0].releaseAll();
            assertAllReleased(mem);
            // a late write of a released stream lowers a word; releasing again lifts it
            mem.writeCounter(LAYOUT.flagOffset(1, 0, 2), Flags.FREE);
            ranks[2].releaseAll();
            assertAllReleased(mem);
            mem.close();
        }
    }

    private static void assertAllReleased(PinnedMemory mem) {
        for (int p = 0; p < 3; p++) {
            for (int s = 0; s < 2; s++) {
                for (int j = 0; j < 3; j++) {
                    int v = mem.readCounter(LAYOUT.flagOffset(p, s, j));
                    assertEquals(Flags.RELEASED, v, "word [" + p + "][" + s + "][" + j + "] releases both kinds of wait");
                }
            }
        }
    }

    @Test
    void theAbortWordNamesTheFirstRankAndCancelsHostWaitsWithRemoteError() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            PinnedMemory mem = backend.allocatePinned(LAYOUT.totalBytes());
            LAYOUT.initialize(mem);
            Staging a = staging(backend, mem, 0);
            Staging b = staging(backend, mem, 2);
            assertEquals(-1, a.abortedBy());
            RuntimeStream stream = backend.createStream(0, "waiter");
            stream.waitAny(mem, LAYOUT.flagOffset(1, 1, 0), Flags.FULL);
            // the stream blocks on rank 1's word, which nobody writes
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
    void theStallReportNamesTheConsumerThatHasNotRead() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            PinnedMemory mem = backend.allocatePinned(LAYOUT.totalBytes());
            LAYOUT.initialize(mem);
            Staging s = staging(backend, mem, 0);
            assertNull(s.describeStall());
            RuntimeStream stream = backend.createStream(0, "send");
            // rank 0 sends one empty item to rank 1 (slot 0), which never reads it
            Lane lane = new Lane(stream);
            s.send(lane, 0, new Rows().set(0, 0, 0), 1L << 1);
            lane.flush();
            stream.synchronize();
            assertEquals("rank 1 has not read rank 0's slot 0", s.describeStall());
            mem.writeCounter(LAYOUT.flagOffset(0, 0, 1), Flags.FREE);
            assertNull(s.describeStall());
            stream.close();
            mem.close();
        }
    }
}
