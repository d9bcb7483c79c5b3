package io.flexlink.runtime.host;

import io.flexlink.runtime.LinkPacing;
import java.util.function.Supplier;

/**
 * Paces one stream's inbound transfers of one path like its emulated link ({@link LinkPacing}, with
 * {@code bytes / rate + latency} per transfer): the stream waits until the link would have carried the
 * transfer. The credit lets a link that sat idle for a moment (while its stream copied a chunk out or
 * waited for a peer) catch up, as real copy engines overlap such gaps.
 */
final class LinkPacer {
    private final Supplier<Emulation> emulation;
    private final String purpose;
    private final LinkPacing pacing;

    LinkPacer(HostBackend backend, String purpose) {
        this(backend::emulation, purpose, LinkPacing.Clock.SYSTEM);
    }

    /** {@code emulation} is read at every transfer, so that a change of speeds applies from the next one. */
    LinkPacer(Supplier<Emulation> emulation, String purpose, LinkPacing.Clock clock) {
        this.emulation = emulation;
        this.purpose = purpose;
        this.pacing = new LinkPacing(clock);
    }

    /**
     * Called on the stream's thread after a transfer of {@code bytes} that started at {@code startNanos}
     * (on this pacer's clock); returns when the link would have carried it.
     */
    void paced(long startNanos, long bytes) {
        Emulation.Link link = emulation.get().link(purpose);
        if (link != null) {
            pacing.paced(startNanos, link.nanos(bytes));
        }
    }

    /** The link's theoretical free time, on this pacer's clock (tests). */
    long freeAt() {
        return pacing.freeAt();
    }
}
