package io.flexlink.runtime.host;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Paces one stream's inbound transfers of one path like a link of fixed rate (a generic cell-rate
 * algorithm): each transfer advances the link's theoretical free time by {@code bytes / rate + latency},
 * and the stream waits until that time, less a small credit. The credit lets a link that sat idle for a
 * moment (while its stream copied a chunk out or waited for a peer) catch up, as real copy engines
 * overlap such gaps; over any longer interval the rate never exceeds the configured one.
 */
final class LinkPacer {
    static final long CREDIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final HostBackend backend;
    private final String purpose;
    private long freeAt;

    LinkPacer(HostBackend backend, String purpose) {
        this.backend = backend;
        this.purpose = purpose;
    }

    /** Called on the stream's thread after a transfer of {@code bytes} that started at {@code startNanos}. */
    void paced(long startNanos, long bytes) {
        Emulation.Link link = backend.emulation().link(purpose);
        if (link == null) {
            return;
        }
        freeAt = Math.max(freeAt, startNanos - CREDIT_NANOS) + link.nanos(bytes);
        long until = freeAt - CREDIT_NANOS;
        for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }
}
