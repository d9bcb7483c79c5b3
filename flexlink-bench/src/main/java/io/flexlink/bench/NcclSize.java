package io.flexlink.bench;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sizes as nccl-tests reads them: a number, fractions allowed ({@code 1.5G}), times a binary unit
 * K, M or G (either case); the bytes are the product rounded down, as nccl-tests' cast to size_t does.
 * A trailing {@code B} or {@code iB} is accepted ({@code 64KB}, {@code 8MiB}), which nccl-tests ignores too.
 */
final class NcclSize {
    private static final Pattern SIZE = Pattern.compile("\\s*([0-9]*\\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\\s*([kKmMgG]?)(i?[bB])?\\s*");

    private NcclSize() {
    }

    /** The bytes {@code text} stands for; IllegalArgumentException with a message naming it otherwise. */
    static long parse(String text) {
        Matcher m = SIZE.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a size in bytes (e.g. 1024, 64K, 8M, 1.5G)");
        }
        double number = Double.parseDouble(m.group(1));
        long unit;
        switch (m.group(2).toUpperCase(Locale.ROOT)) {
            case "K": unit = 1L << 10; break;
            case "M": unit = 1L << 20; break;
            case "G": unit = 1L << 30; break;
            default: unit = 1;
        }
        double bytes = number * unit;
        if (!(bytes < 0x1p62)) {
            throw new IllegalArgumentException("'" + text + "' is too large a size");
        }
        return (long) bytes;
    }
}
