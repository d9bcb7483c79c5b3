package io.flexlink.runtime.host;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Paces one stream's inbound transfers of one path like a link of fixed rate (a generic cell-rate
 * algorithm): each transfer advances the link's theoretical free time by {@code bytes / rate + latency},
 * and the stream waits until that time, less a small credit. The credit lets a link that sat idle for a
 * moment (while its stream copied a chunk out or waited for a peer) catch up, as real copy engines
 * overlap such gaps; over any longer interval the rate never exceeds the configured one.
 */
final class LinkPacer {
    static final long CREDIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    /** Where the pacer reads the time and how it waits; tests pass a fake one (no sleeping, no wall clock). */
    interface Clock {
        long nanoTime();

        /** Waits about {@code nanos} (may return early: the pacer reads the time again). */
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

    private final Supplier<Emulation> emulation;
    private final String purpose;
    private final Clock clock;
    /** Nothing carried yet: the first transfer starts the link (System.nanoTime() may be negative). */
    private long freeAt = Long.MIN_VALUE;

    LinkPacer(HostBackend backend, String purpose) {
        this(backend::emulation, purpose, Clock.SYSTEM);
    }

    /** {@code emulation} is read at every transfer, so that a change of speeds applies from the next one. */
    LinkPacer(Supplier<Emulation> emulation, String purpose, Clock clock) {
        this.emulation = emulation;
        this.purpose = purpose;
        this.clock = clock;
    }

    /**
     * Called on the stream's thread after a transfer of {@code bytes} that started at {@code startNanos}
     * (on this pacer's clock); returns when the link would have carried it.
     */
    void paced(long startNanos, long bytes) {
        Emulation.Link link = emulation.get().link(purpose);
        if (link == null) {
            return;
        }
        freeAt = Math.max(freeAt, startNanos - CREDIT_NANOS) + link.nanos(bytes);
        long until = freeAt - CREDIT_NANOS;
        for (long left = until - clock.nanoTime(); left > 0; left = until - clock.nanoTime()) {
            clock.park(left);
        }
    }

    /** The link's theoretical free time, on this pacer's clock (tests). */
    long freeAt() {
        return freeAt;
    }
}
