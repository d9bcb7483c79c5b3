package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * --gate MIN[,LARGE]: FlexLink's out-of-place busbw (algbw on one rank, where busbw is 0: see
 * {@link Row.Basis}) must be at least MIN times the baseline's at every size, and at least LARGE times at
 * sizes of 64 MiB and more. A CI guard that splitting never costs more than noise and pays where it should.
 */
final class Gate {
    /** Sizes from which the LARGE bound applies. */
    static final long LARGE_BYTES = 64L << 20;

    final double min;
    /** NaN when not given. */
    final double large;
    private final List<String> failures = new ArrayList<>();

    private Gate(double min, double large) {
        this.min = min;
        this.large = large;
    }

    /** Parses {@code MIN} or {@code MIN,LARGE}; throws INVALID_ARGUMENT (exit code 2) when malformed. */
    static Gate parse(String text) {
        String[] parts = text.split(",");
        if (parts.length < 1 || parts.length > 2) {
            throw bad(text);
        }
        try {
            double min = Double.parseDouble(parts[0].trim());
            double large = parts.length == 2 ? Double.parseDouble(parts[1].trim()) : Double.NaN;
            if (!(min >= 0) || Double.isInfinite(min) || (parts.length == 2 && (!(large >= 0) || Double.isInfinite(large)))) {
                throw bad(text);
            }
            return new Gate(min, large);
        } catch (NumberFormatException e) {
            throw bad(text);
        }
    }

    private static FlexLinkException bad(String text) {
        return new FlexLinkException(Result.INVALID_ARGUMENT,
                "--gate: expected MIN or MIN,LARGE (ratios to the baseline, e.g. 0.95,1.2), got '" + text + "'");
    }

    /** Checks every row that has a baseline; returns true when all pass. */
    boolean check(List<Row> rows) {
        failures.clear();
        for (Row r : rows) {
            double vs = r.vs();
            if (r.baseline == null) {
                continue;
            }
            String bw = r.basis.label();
            if (Double.isNaN(vs)) {
                failures.add(r.label() + ": baseline " + bw + " is 0");
                continue;
            }
            if (vs < min) {
                failures.add(String.format(Locale.ROOT, "%s: %s %.2f < %.2f x baseline %.2f (vs %.3f)",
                        r.label(), bw, r.basis.of(r.outOfPlace), min, r.basis.of(r.baseline), vs));
            } else if (!Double.isNaN(large) && r.bytes >= LARGE_BYTES && vs < large) {
                failures.add(String.format(Locale.ROOT, "%s: %s %.2f < %.2f x baseline %.2f (vs %.3f, size >= 64M)",
                        r.label(), bw, r.basis.of(r.outOfPlace), large, r.basis.of(r.baseline), vs));
            }
        }
        return failures.isEmpty();
    }

    List<String> failures() {
        return failures;
    }

    String describe() {
        return "min " + min + (Double.isNaN(large) ? "" : ", large (>= 64M) " + large);
    }
}
