package io.flexlink.bench;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Locale;

/** C's printf formats that Java's Formatter does not reproduce, as nccl-tests prints them. */
final class CFormat {
    private CFormat() {
    }

    /** C's {@code %g}: 6 significant digits, trailing zeros removed, exponent form outside [1e-4, 1e6). */
    static String g(double v) {
        if (Double.isNaN(v)) {
            return "nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        if (v == 0) {
            return (1 / v < 0) ? "-0" : "0";
        }
        BigDecimal rounded = new BigDecimal(v).round(new MathContext(6, RoundingMode.HALF_EVEN));
        int exp = rounded.precision() - rounded.scale() - 1;
        if (exp < -4 || exp >= 6) {
            BigDecimal mant = rounded.movePointLeft(exp);
            String m = strip(mant.setScale(5, RoundingMode.HALF_EVEN).toPlainString());
            return m + "e" + (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
        }
        return strip(rounded.setScale(Math.max(0, 5 - exp), RoundingMode.HALF_EVEN).toPlainString());
    }

    private static String strip(String s) {
        if (s.indexOf('.') < 0) {
            return s;
        }
        int end = s.length();
        while (s.charAt(end - 1) == '0') {
            end--;
        }
        if (s.charAt(end - 1) == '.') {
            end--;
        }
        return s.substring(0, end);
    }

    /**
     * A value in a column of {@code width}: {@code %.2f}, else {@code %.1f}, else {@code %.0f}, else
     * exponent form, whichever fits first (nccl-tests' time and bandwidth columns).
     */
    static String fit(double v, int width) {
        for (int decimals = 2; decimals >= 0; decimals--) {
            String s = String.format(Locale.ROOT, "%" + width + "." + decimals + "f", v);
            if (s.length() <= width) {
                return s;
            }
        }
        return String.format(Locale.ROOT, "%" + width + (width >= 7 ? ".1e" : ".0e"), v);
    }
}
