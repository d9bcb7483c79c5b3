package io.flexlink.hier;

import io.flexlink.runtime.LinkPacing;

/**
 * Paces the inbound chunks of one rank's TCP rail like a link of fixed rate and latency per chunk (the
 * {@code rail:} entry of {@code flexlink.emulate}), with the host backend's algorithm for its other links
 * ({@link LinkPacing}).
 */
final class RailPacer {
    private final double bytesPerNano;
    private final long latencyNanos;
    private final LinkPacing pacing;

    /** {@code bytesPerSecond} 0: unthrottled. */
    RailPacer(double bytesPerSecond, long latencyNanos, LinkPacing.Clock clock) {
        this.bytesPerNano = bytesPerSecond / 1e9;
        this.latencyNanos = latencyNanos;
        this.pacing = new LinkPacing(clock);
    }

    /** Called on the receiving thread after a chunk of {@code bytes} that began at {@code startNanos}. */
    void paced(long startNanos, long bytes) {
        if (bytesPerNano > 0) {
            pacing.paced(startNanos, (long) (bytes / bytesPerNano) + latencyNanos);
        }
    }
}
