package io.flexlink.runtime.host;

import io.flexlink.config.EmulatedLinks;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/**
 * Emulated link speeds of the host backend ({@code flexlink.emulate}): for each path, the rate at which
 * a rank receives that path's bytes and a fixed latency per chunk. Since every algorithm here moves
 * {@code busFactor × size} bytes into each rank, the rate is the path's bus bandwidth in nccl-tests'
 * sense, and with rates Bp and Bx the best auxiliary share is Bx / (Bp + Bx).
 */
public final class Emulation {
    /** One path's link. */
    public static final class Link {
        final double bytesPerNano;
        final long latencyNanos;

        Link(double bytesPerSecond, long latencyNanos) {
            this.bytesPerNano = bytesPerSecond / 1e9;
            this.latencyNanos = latencyNanos;
        }

        /** Nanoseconds the link is busy with {@code bytes}. */
        long nanos(long bytes) {
            return (long) (bytes / bytesPerNano) + latencyNanos;
        }
    }

    static final Emulation OFF = new Emulation(Collections.emptyMap());
    /** The inter-node link of a multi-node communicator's rails (not a path of flexlink.paths). */
    public static final String RAIL = EmulatedLinks.RAIL;

    private final Map<String, Link> links;

    private Emulation(Map<String, Link> links) {
        this.links = links;
    }

    /** Bytes per second of {@code link}'s emulated rate ({@link #RAIL} for the rails), or 0 when unthrottled. */
    public double bytesPerSecond(String link) {
        Link l = links.get(link);
        return l == null ? 0 : l.bytesPerNano * 1e9;
    }

    /** The emulated latency per chunk of {@code link}, in nanoseconds (0 when unthrottled). */
    public long latencyNanos(String link) {
        Link l = links.get(link);
        return l == null ? 0 : l.latencyNanos;
    }

    /** The link for transfers of {@code purpose} ({@code primary}, {@code pcie}), or null when unthrottled. */
    Link link(String purpose) {
        return purpose == null ? null : links.get(purpose);
    }

    /**
     * Parses {@code primary:400MB/s,pcie:100MB/s@50us}; {@code off} or empty for none. The syntax is the
     * setting's ({@link EmulatedLinks#parse}): a bad token is INVALID_ARGUMENT naming it.
     */
    public static Emulation parse(String spec) {
        Map<String, EmulatedLinks.Link> parsed = EmulatedLinks.parse(spec);
        if (parsed.isEmpty()) {
            return OFF;
        }
        Map<String, Link> links = new HashMap<>();
        parsed.forEach((path, l) -> links.put(path, new Link(l.bytesPerSecond(), l.latencyNanos())));
        return new Emulation(Collections.unmodifiableMap(links));
    }

    @Override
    public String toString() {
        return links.isEmpty() ? "off" : links.keySet().toString();
    }
}
