package io.flexlink.config;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Locale;

/** Parses and prints byte sizes the way nccl-tests does ({@code 8}, {@code 1K}, {@code 64M}, {@code 1G}). */
public final class ByteSizes {
    private ByteSizes() {
    }

    /** Parses a size with an optional K, M, G or T suffix (powers of 1024; a trailing B is allowed). */
    public static long parse(String text) {
        if (text == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "size: null");
        }
        String t = text.trim().toUpperCase(Locale.ROOT);
        if (t.endsWith("IB")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("B") && t.length() > 1) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'K': unit = 1L << 10; break;
                case 'M': unit = 1L << 20; break;
                case 'G': unit = 1L << 30; break;
                case 'T': unit = 1L << 40; break;
                default: unit = 1;
            }
        }
        if (unit != 1) {
            t = t.substring(0, t.length() - 1);
        }
        try {
            long v = Long.parseLong(t.trim());
            if (v < 0) {
                throw new NumberFormatException("negative");
            }
            return Math.multiplyExact(v, unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "size: cannot read '" + text + "' as bytes");
        }
    }

    /** Prints bytes with the largest exact binary suffix ({@code 4M}, {@code 1536K}, {@code 7}). */
    public static String format(long bytes) {
        String[] suffix = {"", "K", "M", "G", "T"};
        int i = 0;
        long v = bytes;
        while (i < suffix.length - 1 && v != 0 && v % 1024 == 0) {
            v /= 1024;
            i++;
        }
        return v + suffix[i];
    }
}
