package io.flexlink.runtime.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class FloatFormatsTest {

    /**
     * An independent reference for the narrow formats: values from the textbook formula, rounding by
     * searching the nearest representable value in double (no bit tricks shared with the code).
     */
    enum Fmt {
        HALF(5, 10, 15, false, DataType.FLOAT16),
        BF16(8, 7, 127, false, DataType.BFLOAT16),
        E4M3(4, 3, 7, true, DataType.FLOAT8E4M3),
        E5M2(5, 2, 15, true, DataType.FLOAT8E5M2);

        final int eBits;
        final int mBits;
        final int bias;
        /** FP8: saturate to the largest finite value instead of overflowing to infinity. */
        final boolean saturating;
        final DataType type;
        final int signBit;
        final int maxFinite;
        final int infCode;
        final int canonicalNan;

        Fmt(int eBits, int mBits, int bias, boolean saturating, DataType type) {
            this.eBits = eBits;
            this.mBits = mBits;
            this.bias = bias;
            this.saturating = saturating;
            this.type = type;
            this.signBit = 1 << (eBits + mBits);
            int allOnesExp = ((1 << eBits) - 1) << mBits;
            // E4M3FN has no infinity: only S.1111.111 is NaN, so the top binade is mostly finite.
            this.maxFinite = type == DataType.FLOAT8E4M3 ? signBit - 2 : allOnesExp - 1;
            this.infCode = type == DataType.FLOAT8E4M3 ? -1 : allOnesExp;
            this.canonicalNan = signBit == 0x80 ? 0x7F : 0x7FFF;
        }

        boolean isNan(int code) {
            int mag = code & (signBit - 1);
            return mag > maxFinite && mag != infCode;
        }

        /** The value of {@code code} by the formula (-1)^s * 2^(e - bias) * 1.m, or subnormal. */
        double value(int code) {
            int mag = code & (signBit - 1);
            double sign = (code & signBit) != 0 ? -1.0 : 1.0;
            if (mag == infCode) {
                return sign * Double.POSITIVE_INFINITY;
            }
            if (mag > maxFinite) {
                return Double.NaN;
            }
            return sign * formula(mag);
        }

        /** The finite-number formula applied to any magnitude, ignoring inf/NaN encodings. */
        double formula(int mag) {
            int e = mag >>> mBits;
            int m = mag & ((1 << mBits) - 1);
            if (e == 0) {
                return Math.scalb((double) m, 1 - bias - mBits);
            }
            return Math.scalb((double) ((1 << mBits) + m), e - bias - mBits);
        }

        /** {@code v} rounded to nearest even (saturating for FP8); NaN → canonical NaN. */
        int round(double v) {
            if (Double.isNaN(v)) {
                return canonicalNan;
            }
            int sign = (Double.doubleToRawLongBits(v) < 0) ? signBit : 0;
            double a = Math.abs(v);
            int lo = 0; // largest code with value <= a, by binary search over the monotone magnitudes
            int hi = maxFinite;
            while (lo < hi) {
                int mid = (lo + hi + 1) >>> 1;
                if (value(mid) <= a) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            double below = value(lo);
            if (below == a) {
                return sign | lo;
            }
            int upCode = lo + 1; // past maxFinite: the value the format would have there without inf/NaN
            double above = formula(upCode);
            double midpoint = (below + above) / 2; // exact in double
            boolean up = a > midpoint || (a == midpoint && (lo & 1) != 0);
            if (!up) {
                return sign | lo;
            }
            if (upCode > maxFinite) {
                return sign | (saturating ? maxFinite : infCode);
            }
            return sign | upCode;
        }

        float decode(int code) {
            switch (this) {
                case HALF: return FloatFormats.halfToFloat((short) code);
                case BF16: return FloatFormats.bf16ToFloat((short) code);
                case E4M3: return FloatFormats.e4m3ToFloat((byte) code);
                default: return FloatFormats.e5m2ToFloat((byte) code);
            }
        }

        int encode(float f) {
            switch (this) {
                case HALF: return FloatFormats.floatToHalf(f) & 0xFFFF;
                case BF16: return FloatFormats.floatToBf16(f) & 0xFFFF;
                case E4M3: return FloatFormats.floatToE4m3(f) & 0xFF;
                default: return FloatFormats.floatToE5m2(f) & 0xFF;
            }
        }
    }

    @Test
    void halfKnownValues() {
        assertEquals(0x3C00, enc(Fmt.HALF, 1.0f));
        assertEquals(0xC000, enc(Fmt.HALF, -2.0f));
        assertEquals(0x3800, enc(Fmt.HALF, 0.5f));
        assertEquals(0x7BFF, enc(Fmt.HALF, 65504f));
        assertEquals(0x7BFF, enc(Fmt.HALF, 65519.996f)); // just below the rounding boundary
        assertEquals(0x7C00, enc(Fmt.HALF, 65520f)); // tie with odd 0x7BFF: up, to infinity
        assertEquals(0xFC00, enc(Fmt.HALF, Float.NEGATIVE_INFINITY));
        assertEquals(0x0001, enc(Fmt.HALF, 0x1p-24f)); // smallest subnormal
        assertEquals(0x0000, enc(Fmt.HALF, 0x1p-25f)); // tie between 0 and 0x0001: even
        assertEquals(0x0001, enc(Fmt.HALF, 0x1.8p-25f));
        assertEquals(0x0002, enc(Fmt.HALF, 0x1.8p-24f)); // tie between 1 and 2 units: even
        assertEquals(0x0400, enc(Fmt.HALF, 0x1p-14f)); // smallest normal
        assertEquals(0x03FF, enc(Fmt.HALF, 0x1.ff8p-15f)); // largest subnormal
        assertEquals(0x0400, enc(Fmt.HALF, 0x1.ffcp-15f)); // tie above it: even, into the normals
        assertEquals(0x3C00, enc(Fmt.HALF, 1 + 0x1p-11f)); // tie: even (down)
        assertEquals(0x3C02, enc(Fmt.HALF, 1 + 0x3p-11f)); // tie: even (up)
        assertEquals(0x8000, enc(Fmt.HALF, -0.0f));
        assertEquals(0x7E00, enc(Fmt.HALF, Float.NaN));
        assertEquals(1.0f, FloatFormats.halfToFloat((short) 0x3C00));
        assertEquals(65504f, FloatFormats.halfToFloat((short) 0x7BFF));
        assertEquals(0x1p-24f, FloatFormats.halfToFloat((short) 0x0001));
        assertEquals(Float.POSITIVE_INFINITY, FloatFormats.halfToFloat((short) 0x7C00));
        assertTrue(Float.isNaN(FloatFormats.halfToFloat((short) 0xFE00)));
    }

    @Test
    void bf16KnownValues() {
        assertEquals(0x3F80, enc(Fmt.BF16, 1.0f));
        assertEquals(0xC000, enc(Fmt.BF16, -2.0f));
        assertEquals(0x3F00, enc(Fmt.BF16, 0.5f));
        assertEquals(0x7F7F, enc(Fmt.BF16, 0x1.FEp127f)); // largest finite
        assertEquals(0x7F80, enc(Fmt.BF16, Float.MAX_VALUE)); // rounds past it: infinity
        assertEquals(0x0001, enc(Fmt.BF16, 0x1p-133f)); // smallest subnormal
        assertEquals(0x0080, enc(Fmt.BF16, 0x1p-126f)); // smallest normal
        assertEquals(0x3F80, enc(Fmt.BF16, 1 + 0x1p-8f)); // tie: even (down)
        assertEquals(0x3F82, enc(Fmt.BF16, 1 + 0x3p-8f)); // tie: even (up)
        assertEquals(0x7FC0, enc(Fmt.BF16, Float.NaN));
        assertEquals(0xFFC1, enc(Fmt.BF16, Float.intBitsToFloat(0xFFC10000))); // sign and payload kept
        assertTrue(Float.isNaN(FloatFormats.bf16ToFloat((short) enc(Fmt.BF16, Float.intBitsToFloat(0x7F800001)))));
        assertEquals(1.0f, FloatFormats.bf16ToFloat((short) 0x3F80));
    }

    @Test
    void e4m3KnownValues() {
        assertEquals(0x38, enc(Fmt.E4M3, 1.0f));
        assertEquals(0xC0, enc(Fmt.E4M3, -2.0f));
        assertEquals(0x30, enc(Fmt.E4M3, 0.5f));
        assertEquals(0x7E, enc(Fmt.E4M3, 448f)); // largest finite
        assertEquals(0x7E, enc(Fmt.E4M3, 464f)); // tie toward 480: would be NaN's code, saturates
        assertEquals(0x7E, enc(Fmt.E4M3, 1e30f));
        assertEquals(0xFE, enc(Fmt.E4M3, -1e30f));
        assertEquals(0x7E, enc(Fmt.E4M3, Float.POSITIVE_INFINITY));
        assertEquals(0xFE, enc(Fmt.E4M3, Float.NEGATIVE_INFINITY));
        assertEquals(0x7F, enc(Fmt.E4M3, Float.NaN));
        assertEquals(0xFF, enc(Fmt.E4M3, Float.intBitsToFloat(0xFFC00000)));
        assertEquals(0x01, enc(Fmt.E4M3, 0x1p-9f)); // smallest subnormal
        assertEquals(0x00, enc(Fmt.E4M3, 0x1p-10f)); // tie: even
        assertEquals(0x08, enc(Fmt.E4M3, 0x1p-6f)); // smallest normal
        assertEquals(0x38, enc(Fmt.E4M3, 1 + 0x1p-4f)); // tie: even (down)
        assertEquals(0x3A, enc(Fmt.E4M3, 1 + 0x3p-4f)); // tie: even (up)
        assertEquals(448f, FloatFormats.e4m3ToFloat((byte) 0x7E));
        assertEquals(-0x1p-9f, FloatFormats.e4m3ToFloat((byte) 0x81));
        assertTrue(Float.isNaN(FloatFormats.e4m3ToFloat((byte) 0x7F)));
        assertTrue(Float.isNaN(FloatFormats.e4m3ToFloat((byte) 0xFF)));
        assertEquals(256f, FloatFormats.e4m3ToFloat((byte) 0x78)); // e = 15 is a normal binade here
    }

    @Test
    void e5m2KnownValues() {
        assertEquals(0x3C, enc(Fmt.E5M2, 1.0f));
        assertEquals(0xC0, enc(Fmt.E5M2, -2.0f));
        assertEquals(0x38, enc(Fmt.E5M2, 0.5f));
        assertEquals(0x7B, enc(Fmt.E5M2, 57344f)); // largest finite
        assertEquals(0x7B, enc(Fmt.E5M2, 61440f)); // tie toward infinity: saturates
        assertEquals(0x7B, enc(Fmt.E5M2, Float.POSITIVE_INFINITY));
        assertEquals(0xFB, enc(Fmt.E5M2, Float.NEGATIVE_INFINITY));
        assertEquals(0x7E, enc(Fmt.E5M2, Float.NaN));
        assertEquals(0x01, enc(Fmt.E5M2, 0x1p-16f)); // smallest subnormal
        assertEquals(0x00, enc(Fmt.E5M2, 0x1p-17f)); // tie: even
        assertEquals(0x04, enc(Fmt.E5M2, 0x1p-14f)); // smallest normal
        assertEquals(0x3C, enc(Fmt.E5M2, 1 + 0x1p-3f)); // tie: even (down)
        assertEquals(0x3E, enc(Fmt.E5M2, 1 + 0x3p-3f)); // tie: even (up)
        assertEquals(57344f, FloatFormats.e5m2ToFloat((byte) 0x7B));
        assertEquals(Float.NEGATIVE_INFINITY, FloatFormats.e5m2ToFloat((byte) 0xFC));
        assertTrue(Float.isNaN(FloatFormats.e5m2ToFloat((byte) 0x7D)));
    }

    /**
     * Every bit pattern decodes to the formula's value and encodes back to itself, except E5M2's
     * infinities, which the saturating (SATFINITE) conversion maps to ±57344.
     */
    @ParameterizedTest
    @EnumSource(Fmt.class)
    void exhaustiveDecodeAndRoundTrip(Fmt f) {
        for (int code = 0; code < f.signBit << 1; code++) {
            checkCode(f, code);
        }
    }

    private static void checkCode(Fmt f, int code) {
        float v = f.decode(code);
        if (f.isNan(code)) {
            assertTrue(Float.isNaN(v), () -> hex(code));
            assertTrue(f.isNan(f.encode(v)), () -> hex(code));
            return;
        }
        double expected = f.value(code);
        assertEquals(Double.doubleToRawLongBits(expected), Double.doubleToRawLongBits(v), () -> hex(code));
        boolean saturatedInf = f.saturating && Double.isInfinite(expected);
        int back = saturatedInf ? (code & f.signBit) | f.maxFinite : code;
        assertEquals(back, f.encode(v), () -> hex(code));
    }

    /** Rounding from float: random values over each format's range, and every midpoint ± 1 ulp. */
    @ParameterizedTest
    @EnumSource(Fmt.class)
    void floatRoundingMatchesReference(Fmt f) {
        Random rnd = new Random(42 + f.ordinal());
        int minExp = 1 - f.bias - f.mBits - 3;
        int maxExp = (1 << f.eBits) - f.bias + 2;
        for (int i = 0; i < 300_000; i++) {
            float v = i % 4 == 0 ? Float.intBitsToFloat(rnd.nextInt())
                    : Math.scalb((float) rnd.nextDouble() * (rnd.nextBoolean() ? 1 : -1),
                            minExp + rnd.nextInt(maxExp - minExp));
            checkFloat(f, v);
        }
        for (int code = 0; code < f.maxFinite; code++) {
            float mid = (float) ((f.value(code) + f.value(code + 1)) / 2); // exact: p + 1 bits
            for (float v : new float[] {mid, Math.nextUp(mid), Math.nextDown(mid), -mid, -Math.nextUp(mid)}) {
                checkFloat(f, v);
            }
        }
    }

    /** fromDouble rounds once, directly from the double, including just off float-representable ties. */
    @ParameterizedTest
    @EnumSource(Fmt.class)
    void fromDoubleRoundsOnce(Fmt f) {
        Random rnd = new Random(7 + f.ordinal());
        for (int code = 0; code < f.maxFinite; code++) {
            double mid = (f.value(code) + f.value(code + 1)) / 2;
            double eps = Math.ulp(mid) * (1 + rnd.nextInt(1 << 20));
            for (double v : new double[] {mid, mid + eps, mid - eps, -(mid + eps), Math.nextUp(mid)}) {
                checkDouble(f, v);
            }
        }
        for (int i = 0; i < 200_000; i++) {
            checkDouble(f, Math.scalb(rnd.nextGaussian(), rnd.nextInt(60) - 30));
        }
        checkDouble(f, Double.MAX_VALUE);
        checkDouble(f, Double.MIN_VALUE);
        checkDouble(f, -1e300);
        assertTrue(f.isNan((int) FloatFormats.fromDouble(f.type, Double.NaN)));
    }

    @Test
    void fromDoubleAvoidsDoubleRounding() {
        double t = 0x1p-40;
        assertEquals(0x3C01, FloatFormats.fromDouble(DataType.FLOAT16, 1 + 0x1p-11 + t));
        assertEquals(0x3C00, FloatFormats.floatToHalf((float) (1 + 0x1p-11 + t))); // the trap it avoids
        assertEquals(0x3F81, FloatFormats.fromDouble(DataType.BFLOAT16, 1 + 0x1p-8 + t));
        assertEquals(0x39, FloatFormats.fromDouble(DataType.FLOAT8E4M3, 1 + 0x1p-4 + t));
        assertEquals(0x3D, FloatFormats.fromDouble(DataType.FLOAT8E5M2, 1 + 0x1p-3 + t));
        assertEquals(Float.floatToRawIntBits(0.1f), FloatFormats.fromDouble(DataType.FLOAT32, 0.1));
        assertEquals(Double.doubleToRawLongBits(-0.1), FloatFormats.fromDouble(DataType.FLOAT64, -0.1));
    }

    @Test
    void integerConversions() {
        assertEquals(0xFF, FloatFormats.fromDouble(DataType.INT8, -1.7));
        assertEquals(0x7F, FloatFormats.fromDouble(DataType.INT8, 300));
        assertEquals(0x80, FloatFormats.fromDouble(DataType.INT8, -300));
        assertEquals(0, FloatFormats.fromDouble(DataType.UINT8, -5));
        assertEquals(0xFF, FloatFormats.fromDouble(DataType.UINT8, 1e9));
        assertEquals(0xFFFFFFFFL, FloatFormats.fromDouble(DataType.INT32, -1));
        assertEquals(0x7FFFFFFFL, FloatFormats.fromDouble(DataType.INT32, 1e10));
        assertEquals(0xFFFFFFFFL, FloatFormats.fromDouble(DataType.UINT32, 1e10));
        assertEquals(0, FloatFormats.fromDouble(DataType.UINT32, Double.NaN));
        assertEquals(Long.MIN_VALUE, FloatFormats.fromDouble(DataType.INT64, -1e30));
        assertEquals(-1L, FloatFormats.fromDouble(DataType.UINT64, 1e30));
        assertEquals(0x8000000000000800L, FloatFormats.fromDouble(DataType.UINT64, 0x1.0000000000001p63));
        assertEquals(-1.0, FloatFormats.toDouble(DataType.INT8, 0xFF));
        assertEquals(255.0, FloatFormats.toDouble(DataType.UINT8, 0xFFFFFFFF_FFFFFFFFL));
        assertEquals(-2.0, FloatFormats.toDouble(DataType.INT32, 0xFFFFFFFEL));
        assertEquals(4294967294.0, FloatFormats.toDouble(DataType.UINT32, 0xFFFFFFFEL));
        assertEquals(0x1p64, FloatFormats.toDouble(DataType.UINT64, -1L));
        assertEquals(1.0, FloatFormats.toDouble(DataType.FLOAT16, 0x3C00));
        assertEquals(-2.0, FloatFormats.toDouble(DataType.FLOAT64, Double.doubleToRawLongBits(-2.0)));
        Random rnd = new Random(3);
        for (int i = 0; i < 100_000; i++) {
            long u = rnd.nextLong() >>> rnd.nextInt(12);
            double expected = new BigDecimal(new BigInteger(Long.toUnsignedString(u))).doubleValue();
            assertEquals(expected, FloatFormats.toDouble(DataType.UINT64, u), () -> Long.toUnsignedString(u));
        }
    }

    private static void checkFloat(Fmt f, float v) {
        int expected = f.round(v);
        int actual = f.encode(v);
        if (Float.isNaN(v)) {
            assertTrue(f.isNan(actual), () -> f + " " + Float.floatToRawIntBits(v));
            return;
        }
        assertEquals(expected, actual, () -> f + " float " + v + " (" + Float.toHexString(v) + ")");
    }

    private static void checkDouble(Fmt f, double v) {
        assertEquals(f.round(v), FloatFormats.fromDouble(f.type, v), () -> f + " double " + Double.toHexString(v));
    }

    private static int enc(Fmt f, float v) {
        return f.encode(v);
    }

    private static String hex(int code) {
        return "0x" + Integer.toHexString(code);
    }
}
