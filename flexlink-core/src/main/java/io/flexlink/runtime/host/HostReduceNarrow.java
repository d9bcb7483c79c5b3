package io.flexlink.runtime.host;

import static io.flexlink.runtime.host.HostReduce.U;

import io.flexlink.ReduceOp;

/**
 * FLOAT16/BFLOAT16 and FP8 loops of {@link HostReduce}: decode both operands to float (exact),
 * compute in float, round back to nearest even ({@link FloatFormats}; FP8 saturates), NaN results
 * canonical. A single + or * of two narrow values computed in float and rounded once more is
 * correctly rounded for all four formats (float has ≥ 2p + 2 significand bits), so SUM/PROD match a
 * native narrow operation; AVG divides in float and adds in float before the one rounding, exactly as the
 * kernel does.
 * The format flag is loop-invariant, so its branch costs nothing measurable next to the conversions.
 */
final class HostReduceNarrow {
    private HostReduceNarrow() {
    }

    /** FLOAT16 ({@code bf16 == false}) or BFLOAT16. */
    static void bits16(long d, long a, long b, long n, ReduceOp op, int div, boolean bf16) {
        long bytes = n << 1;
        float fdiv = div;
        switch (op) {
            case SUM:
                for (long o = 0; o < bytes; o += 2) {
                    U.putShort(d + o, enc16(bf16, dec16(bf16, U.getShort(a + o)) + dec16(bf16, U.getShort(b + o))));
                }
                return;
            case PROD:
                for (long o = 0; o < bytes; o += 2) {
                    U.putShort(d + o, enc16(bf16, dec16(bf16, U.getShort(a + o)) * dec16(bf16, U.getShort(b + o))));
                }
                return;
            case MAX:
                for (long o = 0; o < bytes; o += 2) {
                    float r = HostReduceFloat.max(dec16(bf16, U.getShort(a + o)), dec16(bf16, U.getShort(b + o)));
                    U.putShort(d + o, enc16(bf16, r));
                }
                return;
            case MIN:
                for (long o = 0; o < bytes; o += 2) {
                    float r = HostReduceFloat.min(dec16(bf16, U.getShort(a + o)), dec16(bf16, U.getShort(b + o)));
                    U.putShort(d + o, enc16(bf16, r));
                }
                return;
            case AVG:
                for (long o = 0; o < bytes; o += 2) {
                    float x = dec16(bf16, U.getShort(a + o));
                    float y = dec16(bf16, U.getShort(b + o));
                    U.putShort(d + o, enc16(bf16, div > 0 ? x / fdiv + y / fdiv : x + y / -fdiv));
                }
                return;
            default:
                throw new AssertionError(op);
        }
    }

    /** FLOAT8E4M3 ({@code e5m2 == false}) or FLOAT8E5M2. */
    static void bits8(long d, long a, long b, long n, ReduceOp op, int div, boolean e5m2) {
        float fdiv = div;
        switch (op) {
            case SUM:
                for (long i = 0; i < n; i++) {
                    U.putByte(d + i, enc8(e5m2, dec8(e5m2, U.getByte(a + i)) + dec8(e5m2, U.getByte(b + i))));
                }
                return;
            case PROD:
                for (long i = 0; i < n; i++) {
                    U.putByte(d + i, enc8(e5m2, dec8(e5m2, U.getByte(a + i)) * dec8(e5m2, U.getByte(b + i))));
                }
                return;
            case MAX:
                for (long i = 0; i < n; i++) {
                    float r = HostReduceFloat.max(dec8(e5m2, U.getByte(a + i)), dec8(e5m2, U.getByte(b + i)));
                    U.putByte(d + i, enc8(e5m2, r));
                }
                return;
            case MIN:
                for (long i = 0; i < n; i++) {
                    float r = HostReduceFloat.min(dec8(e5m2, U.getByte(a + i)), dec8(e5m2, U.getByte(b + i)));
                    U.putByte(d + i, enc8(e5m2, r));
                }
                return;
            case AVG:
                for (long i = 0; i < n; i++) {
                    float x = dec8(e5m2, U.getByte(a + i));
                    float y = dec8(e5m2, U.getByte(b + i));
                    U.putByte(d + i, enc8(e5m2, div > 0 ? x / fdiv + y / fdiv : x + y / -fdiv));
                }
                return;
            default:
                throw new AssertionError(op);
        }
    }

    private static float dec16(boolean bf16, short x) {
        return bf16 ? FloatFormats.bf16ToFloat(x) : FloatFormats.halfToFloat(x);
    }

    private static short enc16(boolean bf16, float r) {
        if (r != r) {
            return bf16 ? FloatFormats.BF16_NAN : FloatFormats.HALF_NAN;
        }
        return bf16 ? FloatFormats.floatToBf16(r) : FloatFormats.floatToHalf(r);
    }

    private static float dec8(boolean e5m2, byte x) {
        return e5m2 ? FloatFormats.e5m2ToFloat(x) : FloatFormats.e4m3ToFloat(x);
    }

    private static byte enc8(boolean e5m2, float r) {
        if (r != r) {
            return FloatFormats.FP8_NAN;
        }
        return e5m2 ? FloatFormats.floatToE5m2(r) : FloatFormats.floatToE4m3(r);
    }
}
