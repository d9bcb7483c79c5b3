package io.flexlink.runtime.host;

import io.flexlink.DataType;

/**
 * Bit-exact conversions between {@code float}/{@code double} and the narrow floating-point formats
 * of NCCL: IEEE binary16 (half), bfloat16, and OCP FP8 E4M3FN / E5M2.
 *
 * <p>Every narrowing conversion rounds to nearest, ties to even. Half and bfloat16 overflow to
 * infinity; both FP8 formats saturate to their largest finite value (CUDA's {@code __NV_SATFINITE}),
 * infinities included. NaN stays NaN: the sign and the leading payload bits that fit are kept and
 * the quiet bit is set (E4M3 has one NaN per sign, {@code 0x7F}/{@code 0xFF}). Decoding is exact.
 *
 * <p>The CUDA kernels in {@code flexlink-native} ({@code io/flexlink/cuda/reduce.cu}) contain the
 * same algorithms in device code; change both together.
 */
public final class FloatFormats {
    /** Canonical NaN per format, written by reductions so that every machine writes the same bits. */
    static final short HALF_NAN = 0x7FFF;
    static final short BF16_NAN = 0x7FFF;
    static final byte FP8_NAN = 0x7F;

    /** binary16 → binary32 bit patterns, every one exact; the host reduction's hot-path decoder. */
    private static final int[] HALF_TO_FLOAT_BITS = new int[1 << 16];
    private static final float[] E4M3_TO_FLOAT = new float[256];

    static {
        for (int h = 0; h < HALF_TO_FLOAT_BITS.length; h++) {
            HALF_TO_FLOAT_BITS[h] = decodeHalfBits(h);
        }
        for (int b = 0; b < E4M3_TO_FLOAT.length; b++) {
            E4M3_TO_FLOAT[b] = decodeE4m3(b);
        }
    }

    private FloatFormats() {
    }

    // ---------------------------------------------------------------- binary16

    public static float halfToFloat(short h) {
        return Float.intBitsToFloat(HALF_TO_FLOAT_BITS[h & 0xFFFF]);
    }

    /** Raw binary32 bits of half {@code h}; avoids passing NaN payloads through a float register. */
    static int halfToFloatBits(int h) {
        return HALF_TO_FLOAT_BITS[h & 0xFFFF];
    }

    public static short floatToHalf(float f) {
        int x = Float.floatToRawIntBits(f);
        int sign = (x >>> 16) & 0x8000;
        int a = x & 0x7FFFFFFF;
        if (a >= 0x7F800000) {
            return (short) (a == 0x7F800000 ? sign | 0x7C00 : sign | 0x7E00 | ((a >>> 13) & 0x3FF));
        }
        int code = roundMagnitude(a, 10, 15);
        return (short) (sign | Math.min(code, 0x7C00)); // carry past the largest finite value: infinity
    }

    // ---------------------------------------------------------------- bfloat16

    public static float bf16ToFloat(short b) {
        return Float.intBitsToFloat((b & 0xFFFF) << 16);
    }

    public static short floatToBf16(float f) {
        int x = Float.floatToRawIntBits(f);
        if ((x & 0x7FFFFFFF) > 0x7F800000) {
            return (short) ((x >>> 16) | 0x0040);
        }
        // RNE on the low 16 bits; a carry out of the largest finite value yields infinity, as IEEE wants.
        x += 0x7FFF + ((x >>> 16) & 1);
        return (short) (x >>> 16);
    }

    // ---------------------------------------------------------------- FP8 E4M3FN

    public static float e4m3ToFloat(byte b) {
        return E4M3_TO_FLOAT[b & 0xFF];
    }

    public static byte floatToE4m3(float f) {
        int x = Float.floatToRawIntBits(f);
        int sign = (x >>> 24) & 0x80;
        int a = x & 0x7FFFFFFF;
        if (a > 0x7F800000) {
            return (byte) (sign | 0x7F);
        }
        if (a == 0x7F800000) {
            return (byte) (sign | 0x7E);
        }
        return (byte) (sign | Math.min(roundMagnitude(a, 3, 7), 0x7E)); // 0x7F would be NaN: saturate
    }

    // ---------------------------------------------------------------- FP8 E5M2

    /** E5M2 is the upper byte of a binary16, so decoding reuses the half table. */
    public static float e5m2ToFloat(byte b) {
        return Float.intBitsToFloat(HALF_TO_FLOAT_BITS[(b & 0xFF) << 8]);
    }

    public static byte floatToE5m2(float f) {
        int x = Float.floatToRawIntBits(f);
        int sign = (x >>> 24) & 0x80;
        int a = x & 0x7FFFFFFF;
        if (a > 0x7F800000) {
            return (byte) (sign | 0x7E | ((a >>> 21) & 1));
        }
        if (a == 0x7F800000) {
            return (byte) (sign | 0x7B);
        }
        return (byte) (sign | Math.min(roundMagnitude(a, 2, 15), 0x7B)); // 0x7C.. are inf/NaN: saturate
    }

    // ---------------------------------------------------------------- generic element access

    /**
     * The value of one element of type {@code t} whose raw bits are the low {@code 8 * t.size()}
     * bits of {@code rawBits} (higher bits are ignored). Exact for every type except INT64/UINT64
     * beyond 2^53, which round to nearest even.
     */
    public static double toDouble(DataType t, long rawBits) {
        switch (t) {
            case INT8: return (byte) rawBits;
            case UINT8: return rawBits & 0xFF;
            case INT32: return (int) rawBits;
            case UINT32: return rawBits & 0xFFFFFFFFL;
            case INT64: return rawBits;
            case UINT64: return unsignedToDouble(rawBits);
            case FLOAT16: return halfToFloat((short) rawBits);
            case FLOAT32: return Float.intBitsToFloat((int) rawBits);
            case FLOAT64: return Double.longBitsToDouble(rawBits);
            case BFLOAT16: return bf16ToFloat((short) rawBits);
            case FLOAT8E4M3: return e4m3ToFloat((byte) rawBits);
            case FLOAT8E5M2: return e5m2ToFloat((byte) rawBits);
            default: throw new AssertionError(t);
        }
    }

    /**
     * The raw bits of {@code v} as an element of type {@code t}, zero-extended in the low
     * {@code 8 * t.size()} bits of the result.
     *
     * <p>Integer types truncate toward zero and saturate to the type's range (NaN gives 0), like a
     * Java cast. Floating-point types round to nearest even once, directly from {@code v}, with the
     * overflow rules of the narrowing conversions above. FLOAT32 uses Java's correctly rounded
     * {@code (float) v}. The narrower formats cannot simply go through {@code (float) v}: that rounds
     * twice (e.g. 1 + 2^-11 + 2^-40 becomes the half-way float 1 + 2^-11, which then ties down to
     * 1.0 in binary16 instead of up). They go through float rounded to <em>odd</em> instead, which
     * keeps a sticky bit; rounding to odd at precision p + k (k ≥ 2) followed by rounding to nearest
     * at precision p is correctly rounded (Boldo &amp; Melquiond, 2008), and float has at least
     * 13 more significand bits than any of them, also over their subnormal ranges.
     */
    public static long fromDouble(DataType t, double v) {
        switch (t) {
            case INT8: return Math.max(Byte.MIN_VALUE, Math.min(Byte.MAX_VALUE, truncate(v))) & 0xFF;
            case UINT8: return Math.max(0, Math.min(0xFF, truncate(v)));
            case INT32: return (int) v & 0xFFFFFFFFL; // d2i truncates and saturates, NaN → 0
            case UINT32: return Math.max(0, Math.min(0xFFFFFFFFL, truncate(v)));
            case INT64: return (long) v;
            case UINT64: return doubleToUnsigned(v);
            case FLOAT16: return floatToHalf(toFloatRoundOdd(v)) & 0xFFFFL;
            case FLOAT32: return Float.floatToRawIntBits((float) v) & 0xFFFFFFFFL;
            case FLOAT64: return Double.doubleToRawLongBits(v);
            case BFLOAT16: return floatToBf16(toFloatRoundOdd(v)) & 0xFFFFL;
            case FLOAT8E4M3: return floatToE4m3(toFloatRoundOdd(v)) & 0xFFL;
            case FLOAT8E5M2: return floatToE5m2(toFloatRoundOdd(v)) & 0xFFL;
            default: throw new AssertionError(t);
        }
    }

    // ---------------------------------------------------------------- internals

    /**
     * Rounds the finite positive binary32 magnitude {@code a} (raw bits) to a format with
     * {@code mBits} mantissa bits and exponent bias {@code bias}, to nearest even, and returns the
     * magnitude code with an unbounded exponent field; callers clamp overflow.
     */
    private static int roundMagnitude(int a, int mBits, int bias) {
        int exp = a >>> 23;
        int minNormalExp = 127 + 1 - bias; // biased binary32 exponent of the format's smallest normal
        if (exp >= minNormalExp) {
            int shift = 23 - mBits;
            int r = a - ((127 - bias) << 23); // rebias; the exponent field lands right above the mantissa
            r += (1 << (shift - 1)) - 1 + ((r >>> shift) & 1);
            return r >>> shift; // a mantissa carry correctly bumps the exponent
        }
        // Subnormal in the target: count units of 2^(1 - bias - mBits). Binary32 subnormals are far
        // below every target's half unit, so their (missing) implicit bit does not matter.
        int m = (a & 0x7FFFFF) | 0x800000;
        int shift = 151 - bias - mBits - exp; // value = m * 2^(exp - 150); unit = 2^(1 - bias - mBits)
        if (shift > 24) {
            return 0; // below half the smallest subnormal (m < 2^24 ≤ half unit)
        }
        int q = m >>> shift;
        int rem = m & ((1 << shift) - 1);
        int half = 1 << (shift - 1);
        if (rem > half || (rem == half && (q & 1) != 0)) {
            q++;
        }
        return q;
    }

    private static int decodeHalfBits(int h) {
        int sign = (h & 0x8000) << 16;
        int e = (h >>> 10) & 0x1F;
        int m = h & 0x3FF;
        if (e == 0x1F) {
            return sign | 0x7F800000 | (m << 13);
        }
        if (e != 0) {
            return sign | ((e + 127 - 15) << 23) | (m << 13);
        }
        return sign | Float.floatToRawIntBits(m * 0x1p-24f); // subnormal or zero: exact
    }

    private static float decodeE4m3(int b) {
        int sign = (b & 0x80) << 24;
        int e = (b >>> 3) & 0xF;
        int m = b & 0x7;
        if (e == 0xF && m == 0x7) {
            return Float.intBitsToFloat(sign | 0x7FC00000);
        }
        if (e != 0) {
            return Float.intBitsToFloat(sign | ((e + 127 - 7) << 23) | (m << 20));
        }
        return Float.intBitsToFloat(sign | Float.floatToRawIntBits(m * 0x1p-9f));
    }

    /** {@code v} rounded to float toward zero, with the lowest bit set when that was inexact. */
    static float toFloatRoundOdd(double v) {
        float f = (float) v;
        if (v != v || (double) f == v) {
            return f;
        }
        int bits = Float.floatToRawIntBits(f);
        if (Math.abs((double) f) > Math.abs(v)) {
            bits--; // rounded away from zero (possibly to infinity): step back toward zero
        }
        return Float.intBitsToFloat(bits | 1);
    }

    private static long truncate(double v) {
        return (long) v; // NaN → 0, saturates at the long range, which every clamp above lies within
    }

    private static double unsignedToDouble(long u) {
        if (u >= 0) {
            return u;
        }
        // Halve with a sticky bit, so the one rounding of long → double stays correct, then double.
        return (double) ((u >>> 1) | (u & 1)) * 2.0;
    }

    private static long doubleToUnsigned(double v) {
        if (!(v > 0)) {
            return 0; // negatives, zero and NaN
        }
        if (v >= 0x1p64) {
            return -1L;
        }
        if (v < 0x1p63) {
            return (long) v;
        }
        return (long) (v - 0x1p63) | Long.MIN_VALUE; // exact: v is an integer in [2^63, 2^64)
    }
}
