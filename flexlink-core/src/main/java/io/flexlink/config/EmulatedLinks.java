package io.flexlink.config;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The syntax of {@code flexlink.emulate}: {@code primary:400MB/s,pcie:100MB/s@50us}. It lives with the
 * settings so that a bad value fails when the configuration is resolved, on any backend; the host
 * backend turns the parsed links into pacers.
 */
public final class EmulatedLinks {
    /** One path's emulated link: the rate a rank receives its bytes at, and a fixed latency per chunk. */
    /** The inter-node link of a multi-node communicator's rails (not a path of flexlink.paths). */
    public static final String RAIL = "rail";

    public record Link(double bytesPerSecond, long latencyNanos) {
    }

    /** A number, then a unit: {@code 400MB/s}, {@code 1.5GBps}, {@code 50us}. */
    private static final Pattern QUANTITY =
            Pattern.compile("([-+]?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\\s*([a-zA-Z/]+)");
    private static final Map<String, Double> RATE_UNITS = Map.of(
            "gb/s", 1e9, "gbps", 1e9, "mb/s", 1e6, "mbps", 1e6, "kb/s", 1e3, "kbps", 1e3);
    private static final Map<String, Double> LATENCY_UNITS = Map.of("ns", 1.0, "us", 1e3, "ms", 1e6);

    private EmulatedLinks() {
    }

    /** {@code spec} when it parses (the setting's parser), else the parse's INVALID_ARGUMENT. */
    static String check(String spec) {
        parse(spec);
        return spec;
    }

    /**
     * Parses {@code primary:400MB/s,pcie:100MB/s@50us}; {@code off} or empty (or null) for none. Every path
     * must be one of {@link FlexLinkConfig#PATH_NAMES} or {@link #RAIL} (once), every rate positive in GB/s, MB/s or KB/s,
     * every latency non-negative in ns, us or ms; anything else is INVALID_ARGUMENT naming the token.
     */
    public static Map<String, Link> parse(String spec) {
        String s = spec == null ? "" : spec.trim();
        Map<String, Link> links = new LinkedHashMap<>();
        if (s.isEmpty() || s.equalsIgnoreCase("off")) {
            return Collections.unmodifiableMap(links);
        }
        for (String part : s.split(",", -1)) {
            String[] kv = part.trim().split(":", -1);
            if (kv.length != 2) {
                throw bad(spec, "expected path:rate[@latency], got '" + part.trim() + "'");
            }
            String path = kv[0].trim().toLowerCase(Locale.ROOT);
            if (!FlexLinkConfig.PATH_NAMES.contains(path) && !path.equals(RAIL)) {
                throw bad(spec, "unknown path '" + kv[0].trim() + "' (known: "
                        + String.join(", ", FlexLinkConfig.PATH_NAMES) + ", " + RAIL + ")");
            }
            if (links.containsKey(path)) {
                throw bad(spec, "path '" + path + "' is given twice");
            }
            String[] rl = kv[1].trim().split("@", -1);
            if (rl.length > 2) {
                throw bad(spec, "expected path:rate[@latency], got '" + part.trim() + "'");
            }
            links.put(path, new Link(rate(spec, rl[0].trim()), rl.length > 1 ? latency(spec, rl[1].trim()) : 0));
        }
        return Collections.unmodifiableMap(links);
    }

    private static double rate(String spec, String r) {
        Matcher m = QUANTITY.matcher(r);
        Double unit = m.matches() ? RATE_UNITS.get(m.group(2).toLowerCase(Locale.ROOT)) : null;
        if (unit == null) {
            throw bad(spec, "rate '" + r + "' is not a number with a unit of GB/s, MB/s or KB/s");
        }
        double v = Double.parseDouble(m.group(1)) * unit;
        if (!(v > 0) || Double.isInfinite(v)) {
            throw bad(spec, "rate '" + r + "' must be positive");
        }
        return v;
    }

    private static long latency(String spec, String l) {
        Matcher m = QUANTITY.matcher(l);
        Double unit = m.matches() ? LATENCY_UNITS.get(m.group(2).toLowerCase(Locale.ROOT)) : null;
        if (unit == null) {
            throw bad(spec, "latency '" + l + "' is not a number with a unit of ns, us or ms");
        }
        double v = Double.parseDouble(m.group(1)) * unit;
        if (v < 0) {
            throw bad(spec, "latency '" + l + "' must not be negative");
        }
        if (v >= Long.MAX_VALUE) {
            throw bad(spec, "latency '" + l + "' is too large");
        }
        return (long) v;
    }

    private static FlexLinkException bad(String spec, String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, "flexlink.emulate: " + why + " (in '" + spec + "')");
    }
}
