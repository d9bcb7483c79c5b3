package io.flexlink.runtime;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The pacing of one emulated link (a generic cell-rate algorithm): each transfer advances the link's
 * theoretical free time by the time the link is busy with it, and the caller waits until that time, less
 * a small credit. The credit lets a link that sat idle for a moment catch up, as real links overlap such
 * gaps; over any longer interval the rate never exceeds the configured one. The host backend's paths and
 * the TCP rails of io.flexlink.hier both pace with it. One thread per instance.
 */
public final class LinkPacing {
    public static final long CREDIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /** Where the pacing reads the time and how it waits; tests pass a fake one (no sleeping, no wall clock). */
    public interface Clock {
        long nanoTime();

        /** Waits about {@code nanos} (may return early: the pacing reads the time again). */
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

    private final Clock clock;
    /** Nothing carried yet: the first transfer starts the link (System.nanoTime() may be negative). */
    private long freeAt = Long.MIN_VALUE;

    public LinkPacing(Clock clock) {
        this.clock = clock;
    }

    /**
     * After a transfer that started at {@code startNanos} (on this pacing's clock) and keeps the link busy for
     * {@code busyNanos}: returns when the link would have carried it.
     */
    public void paced(long startNanos, long busyNanos) {
        freeAt = Math.max(freeAt, startNanos - CREDIT_NANOS) + busyNanos;
        long until = freeAt - CREDIT_NANOS;
        for (long left = until - clock.nanoTime(); left > 0; left = until - clock.nanoTime()) {
            clock.park(left);
        }
    }

    /** The link's theoretical free time, on this pacing's clock. */
    public long freeAt() {
        return freeAt;
    }
}
