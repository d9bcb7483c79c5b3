package io.flexlink.hier;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Paces the inbound chunks of one rank's TCP rail like a link of fixed rate and latency per chunk (the
 * {@code rail:} entry of {@code flexlink.emulate}), with the host backend's algorithm for its other links:
 * each chunk advances the link's theoretical free time by {@code bytes / rate + latency}, and the chunk
 * is released at that time less a small credit, which lets a link that sat idle for a moment catch up
 * without ever exceeding the rate over a longer interval.
 */
final class RailPacer {
    static final long CREDIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /** Where the pacer reads the time and how it waits (tests pass a fake clock). */
    interface Clock {
        long nanoTime();

        void park(long nanos);

        Clock SYSTEM = new Clock() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void park(long nanos) {
                LockSupport.parkNanos(nanos);
            }
        };
    }

    /** A pacer that never waits (no rail emulation). */
    static final RailPacer OFF = new RailPacer(0, 0, Clock.SYSTEM);

    private final double bytesPerNano;
    private final long latencyNanos;
    private final Clock clock;
    private long freeAt = Long.MIN_VALUE;

    /** {@code bytesPerSecond} 0: unthrottled. */
    RailPacer(double bytesPerSecond, long latencyNanos, Clock clock) {
        this.bytesPerNano = bytesPerSecond / 1e9;
        this.latencyNanos = latencyNanos;
        this.clock = clock;
    }

    /** Called on the receiving thread after a chunk of {@code bytes} that began at {@code startNanos}. */
    void paced(long startNanos, long bytes) {
        if (bytesPerNano <= 0) {
            return;
        }
        freeAt = Math.max(freeAt, startNanos - CREDIT_NANOS) + (long) (bytes / bytesPerNano) + latencyNanos;
        long until = freeAt - CREDIT_NANOS;
        for (long left = until - clock.nanoTime(); left > 0; left = until - clock.nanoTime()) {
            clock.park(left);
        }
    }

    /** The link's theoretical free time (tests). */
    long freeAt() {
        return freeAt;
    }
}
