package io.flexlink.config;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.nio.file.InvalidPathException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The parsers of the settings declared in {@link FlexLinkConfig}: text to a typed value, or a
 * {@link FlexLinkException} INVALID_ARGUMENT saying what is wrong. {@link FlexLinkConfig#conclude()}
 * prefixes the setting's name and variable, so messages here say only what is wrong with the value.
 */
final class SettingParsers {
    private SettingParsers() {
    }

    static FlexLinkException invalid(String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, why);
    }

    /**
     * Empty, or {@code host:port} ({@code [v6 address]:port}) with a port in [1, 65535]; the host is
     * resolved where it is used, not here (a name may resolve differently by then).
     */
    static String hostPort(String s) {
        String v = s.trim();
        if (v.isEmpty()) {
            return v;
        }
        int colon = v.lastIndexOf(':');
        String host = colon < 0 ? "" : v.substring(0, colon);
        if (host.startsWith("[") != host.endsWith("]") || host.replace("[", "").replace("]", "").isEmpty()) {
            throw invalid("'" + s + "' is not host:port (an IPv6 address in brackets)");
        }
        try {
            int port = Integer.parseInt(v.substring(colon + 1));
            if (port >= 1 && port <= 0xffff) {
                return v;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw invalid("'" + s + "': the port must be a number in [1, 65535]");
    }

    /** One of {@code allowed}, case-insensitive, as the lower-case word. */
    static Function<String, String> oneOf(String... allowed) {
        return v -> {
            String l = v.toLowerCase(Locale.ROOT);
            for (String a : allowed) {
                if (a.equals(l)) {
                    return a;
                }
            }
            throw invalid("'" + v + "' is not one of " + String.join("|", allowed));
        };
    }

    /** {@code on} or {@code off} (also {@code true}/{@code false}), case-insensitive. */
    static Function<String, Boolean> onOff() {
        Function<String, String> word = oneOf("on", "off", "true", "false");
        return v -> {
            String w = word.apply(v);
            return w.equals("on") || w.equals("true");
        };
    }

    /** An int in {@code [min, max]}. */
    static Function<String, Integer> intBetween(int min, int max) {
        return v -> {
            int n;
            try {
                n = Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw invalid("'" + v + "' is not a whole number");
            }
            if (n < min || n > max) {
                throw invalid("must be in [" + min + ", " + max + "], got " + n);
            }
            return n;
        };
    }

    /** {@code auto} as {@code auto} (the caller's own rule decides later), anything else by {@code parser}. */
    static <T> Function<String, T> autoOr(T auto, Function<String, T> parser) {
        return v -> v.trim().equals("auto") ? auto : parser.apply(v);
    }

    /** A byte size ({@link ByteSizes}) in {@code [min, max]}. */
    static Function<String, Long> bytesBetween(long min, long max, String why) {
        return v -> {
            long n = bytes(v);
            if (n < min || n > max) {
                throw invalid("must be in [" + ByteSizes.format(min) + ", " + ByteSizes.format(max) + "]" + why
                        + ", got " + n);
            }
            return n;
        };
    }

    static long bytes(String v) {
        try {
            return ByteSizes.parse(v);
        } catch (FlexLinkException e) {
            throw invalid("'" + v + "' is not a size in bytes (e.g. 4096, 64K, 8M, 1G)");
        }
    }

    /** Text that names a file or directory (any text the file system accepts as a path). */
    static String pathText(String v) {
        try {
            java.nio.file.Path.of(v);
        } catch (InvalidPathException e) {
            throw invalid("'" + v + "' is not a file path: " + e.getReason());
        }
        return v;
    }

    /** Hex (an even number of hex digits) or Base64; at least 16 bytes. The value itself is never echoed. */
    static byte[] secret(String s) {
        if (s.isEmpty()) {
            return new byte[0];
        }
        byte[] b;
        if (s.matches("(?:[0-9a-fA-F]{2})+")) {
            b = HexFormat.of().parseHex(s);
        } else {
            try {
                b = Base64.getDecoder().decode(s.replace('-', '+').replace('_', '/'));
            } catch (IllegalArgumentException e) {
                throw invalid("neither hex nor Base64");
            }
        }
        if (b.length < 16) {
            throw invalid(b.length + " bytes is too short (at least 16: 32 hex digits)");
        }
        return b;
    }

    static List<String> paths(String s) {
        List<String> out = new ArrayList<>();
        for (String p : s.split(",")) {
            String n = p.trim().toLowerCase(Locale.ROOT);
            if (n.isEmpty() || out.contains(n)) {
                continue;
            }
            if (!FlexLinkConfig.PATH_NAMES.contains(n)) {
                throw invalid("unknown path '" + p.trim() + "' (known: " + FlexLinkConfig.PATH_NAMES + ")");
            }
            out.add(n);
        }
        if (out.isEmpty()) {
            throw invalid("no path given");
        }
        return Collections.unmodifiableList(out);
    }

    static Map<String, Double> shares(String s) {
        Map<String, Double> out = new LinkedHashMap<>();
        if (s.isEmpty() || s.equalsIgnoreCase("auto")) {
            return Collections.unmodifiableMap(out);
        }
        double sum = 0;
        for (String part : s.split(",", -1)) {
            String[] kv = part.split("=", -1);
            if (kv.length != 2) {
                throw invalid("expected path=fraction, got '" + part.trim() + "'");
            }
            String path = kv[0].trim().toLowerCase(Locale.ROOT);
            if (!FlexLinkConfig.PATH_NAMES.contains(path) || path.equals("primary")) {
                throw invalid("'" + path + "' is not an auxiliary path (pcie, nvshmem)");
            }
            if (out.containsKey(path)) {
                throw invalid("path '" + path + "' is given twice");
            }
            double f;
            try {
                f = Double.parseDouble(kv[1].trim());
            } catch (NumberFormatException e) {
                throw invalid("share of " + path + " is not a number: '" + kv[1].trim() + "'");
            }
            if (!(f >= 0 && f <= 1)) {
                throw invalid("share of " + path + " must be in [0, 1], got " + kv[1].trim());
            }
            out.put(path, f);
            sum += f;
        }
        if (sum > 1 + 1e-9) {
            throw invalid("shares add up to " + sum + " > 1");
        }
        return Collections.unmodifiableMap(out);
    }

    /** A duration, {@code 0}/{@code off} for none; {@code positive} refuses zero. */
    static Function<String, Duration> duration(boolean positive) {
        return s -> {
            Duration d = duration(s);
            if (positive && d.isZero()) {
                throw invalid("must be positive, got '" + s + "'");
            }
            return d;
        };
    }

    /** {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, a bare number of seconds, or {@code 0}/{@code off}. */
    static Duration duration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.equals("0") || t.equals("off") || t.equals("none")) {
            return Duration.ZERO;
        }
        long mult;
        String num;
        if (t.endsWith("ms")) {
            mult = 1;
            num = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            mult = 1000;
            num = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            mult = 60_000;
            num = t.substring(0, t.length() - 1);
        } else if (t.endsWith("h")) {
            mult = 3_600_000;
            num = t.substring(0, t.length() - 1);
        } else {
            mult = 1000;
            num = t;
        }
        long v;
        try {
            v = Long.parseLong(num.trim());
        } catch (NumberFormatException e) {
            throw invalid("'" + s + "' is not a duration (e.g. 500ms, 30s, 5m, 2h)");
        }
        if (v < 0) {
            throw invalid("must not be negative, got '" + s + "'");
        }
        try {
            return Duration.ofMillis(Math.multiplyExact(v, mult));
        } catch (ArithmeticException e) {
            throw invalid("'" + s + "' is too long");
        }
    }

    /** A file or directory setting: null when empty or {@code off}; a leading {@code ~} is the user's home. */
    static java.nio.file.Path pathOrOff(String text) {
        String v = text.trim();
        if (v.isEmpty() || v.equalsIgnoreCase("off")) {
            return null;
        }
        return java.nio.file.Path.of(v.startsWith("~") ? System.getProperty("user.home") + v.substring(1) : v);
    }
}
