package io.flexlink.runtime.host;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
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

    private final Map<String, Link> links;

    private Emulation(Map<String, Link> links) {
        this.links = links;
    }

    /** The link for transfers of {@code purpose} ({@code primary}, {@code pcie}), or null when unthrottled. */
    Link link(String purpose) {
        return purpose == null ? null : links.get(purpose);
    }

    /** Parses {@code primary:400MB/s,pcie:100MB/s@50us}; {@code off} or empty for none. */
    public static Emulation parse(String spec) {
        String s = spec == null ? "" : spec.trim();
        if (s.isEmpty() || s.equalsIgnoreCase("off")) {
            return OFF;
        }
        Map<String, Link> links = new HashMap<>();
        for (String part : s.split(",")) {
            String[] kv = part.trim().split(":");
            if (kv.length != 2) {
                throw bad(spec, "expected path:rate[@latency], got '" + part.trim() + "'");
            }
            String[] rl = kv[1].trim().split("@");
            links.put(kv[0].trim().toLowerCase(Locale.ROOT),
                    new Link(rate(spec, rl[0].trim()), rl.length > 1 ? latency(spec, rl[1].trim()) : 0));
        }
        return new Emulation(Collections.unmodifiableMap(links));
    }

    private static double rate(String spec, String r) {
        String t = r.toLowerCase(Locale.ROOT).replace("/s", "").replace("ps", "");
        double unit;
        if (t.endsWith("gb")) {
            unit = 1e9;
        } else if (t.endsWith("mb")) {
            unit = 1e6;
        } else if (t.endsWith("kb")) {
            unit = 1e3;
        } else {
            throw bad(spec, "rate '" + r + "' needs a unit: GB/s, MB/s or KB/s");
        }
        double v = Double.parseDouble(t.substring(0, t.length() - 2));
        if (!(v > 0)) {
            throw bad(spec, "rate '" + r + "' must be positive");
        }
        return v * unit;
    }

    private static long latency(String spec, String l) {
        String t = l.toLowerCase(Locale.ROOT);
        if (t.endsWith("us")) {
            return (long) (Double.parseDouble(t.substring(0, t.length() - 2)) * 1e3);
        }
        if (t.endsWith("ms")) {
            return (long) (Double.parseDouble(t.substring(0, t.length() - 2)) * 1e6);
        }
        throw bad(spec, "latency '" + l + "' needs a unit: us or ms");
    }

    private static FlexLinkException bad(String spec, String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.emulate: " + why + " (in '" + spec + "')");
    }

    @Override
    public String toString() {
        return links.isEmpty() ? "off" : links.keySet().toString();
    }
}
