package io.flexlink.runtime.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.runtime.LinkPacing;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pacing arithmetic on a fake clock: parking advances it, nothing sleeps. */
class LinkPacerTest {
    private static final long MS = 1_000_000L;

    /** A clock that only moves when the pacer parks; records every park. */
    static final class FakeClock implements LinkPacing.Clock {
        long now;
        final List<Long> parks = new ArrayList<>();

        FakeClock(long start) {
            now = start;
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void park(long nanos) {
            parks.add(nanos);
            now += nanos;
        }

        long parked() {
            return parks.stream().mapToLong(Long::longValue).sum();
        }
    }

    private static LinkPacer pacer(String spec, FakeClock clock) {
        Emulation e = Emulation.parse(spec);
        return new LinkPacer(() -> e, "pcie", clock);
    }

    @Test
    void aTransferWithinTheCreditDoesNotWait() {
        FakeClock clock = new FakeClock(10 * MS);
        LinkPacer p = pacer("pcie:1MB/s@50us", clock);
        p.paced(clock.now, 1000); // 1 ms + 50 us of link time, less than the 2 ms credit
        assertEquals(10 * MS - LinkPacing.CREDIT_NANOS + MS + 50_000, p.freeAt());
        assertEquals(List.of(), clock.parks);
    }

    @Test
    void backToBackTransfersWaitForTheLinkLessTheCredit() {
        FakeClock clock = new FakeClock(0);
        LinkPacer p = pacer("pcie:1MB/s", clock);
        for (int i = 0; i < 5; i++) {
            p.paced(clock.now, 1000); // each 1 ms on the link
        }
        // five transfers started at 0 occupy the link until 5 ms - credit; the stream waits until 2 credits less
        assertEquals(5 * MS - LinkPacing.CREDIT_NANOS, p.freeAt());
        assertEquals(5 * MS - 2 * LinkPacing.CREDIT_NANOS, clock.now);
        assertEquals(clock.now, clock.parked());
    }

    @Test
    void theRateHoldsOverALongRun() {
        FakeClock clock = new FakeClock(0);
        LinkPacer p = pacer("pcie:100MB/s@10us", clock);
        long bytes = 1 << 20;
        int n = 1000;
        for (int i = 0; i < n; i++) {
            p.paced(clock.now, bytes);
        }
        long perTransfer = (long) (bytes / 0.1) + 10_000; // 100 MB/s = 0.1 byte/ns, plus the latency
        assertEquals(n * perTransfer - 2 * LinkPacing.CREDIT_NANOS, clock.now);
    }

    @Test
    void anIdleLinkCatchesUpByTheCreditOnly() {
        FakeClock clock = new FakeClock(0);
        LinkPacer p = pacer("pcie:1MB/s", clock);
        p.paced(0, 1000);
        clock.now = 100 * MS; // idle for a long time: at most one credit of catch-up
        p.paced(clock.now, 10_000); // 10 ms on the link, starting from now - credit
        assertEquals(100 * MS - LinkPacing.CREDIT_NANOS + 10 * MS, p.freeAt());
        assertEquals(List.of(10 * MS - 2 * LinkPacing.CREDIT_NANOS), clock.parks);
    }

    @Test
    void aNegativeClockStartsTheLinkAtTheFirstTransfer() {
        // System.nanoTime() has an arbitrary origin: a link must not count from 0
        FakeClock clock = new FakeClock(-1_000_000 * MS);
        LinkPacer p = pacer("pcie:1MB/s", clock);
        p.paced(clock.now, 1000);
        assertEquals(List.of(), clock.parks);
    }

    @Test
    void aPathWithoutALinkIsNotPaced() {
        FakeClock clock = new FakeClock(0);
        Emulation e = Emulation.parse("primary:1KB/s");
        LinkPacer p = new LinkPacer(() -> e, "pcie", clock);
        for (int i = 0; i < 10; i++) {
            p.paced(0, 1 << 20);
        }
        assertEquals(List.of(), clock.parks);
    }

    @Test
    void aChangedEmulationAppliesFromTheNextTransfer() {
        FakeClock clock = new FakeClock(0);
        Emulation[] current = {Emulation.parse("pcie:1MB/s")};
        LinkPacer p = new LinkPacer(() -> current[0], "pcie", clock);
        p.paced(0, 1000);
        current[0] = Emulation.parse("pcie:1KB/s");
        p.paced(clock.now, 1000); // 1 s now
        assertEquals(MS + 1000 * MS - LinkPacing.CREDIT_NANOS, p.freeAt());
    }
}
