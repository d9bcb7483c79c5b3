package io.flexlink.testing;

import io.flexlink.DataType;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Inputs and expected results of PreMulSum tests, computed in Java with the type's rounding: each product
 * {@code x * s} rounded once to the type (NCCL's pre-multiplication), then summed. Floating-point sums depend
 * on the order of addition, which differs between paths, so the data keeps every sum exact:
 * <ul>
 *   <li>{@link #ROUNDING}: for floating-point types exactly one rank contributes a random finite value of the
 *       type to each element (the others 0), so the product's rounding (overflow to infinity for fp16/bf16,
 *       saturation for fp8) is checked bit for bit while the sum of it and zeros is exact in any order;
 *       integer types take random values on every rank (wrapping products and sums do not depend on order);</li>
 *   <li>{@link #EXACT}: every rank contributes a small integer (|v| ≤ 4, fp8 ≤ 2) and the scalar is 0.75
 *       (fp8 0.5), so every product and every partial sum is exact in the type.</li>
 * </ul>
 */
public final class PreMulSumData {
    public static final int ROUNDING = 0;
    public static final int EXACT = 1;

    private PreMulSumData() {
    }

    /** The scalar of {@link #EXACT} for {@code type}. */
    public static double exactScalar(DataType type) {
        return isFp8(type) ? 0.5 : type.isFloatingPoint() ? 0.75 : 3;
    }

    /** Raw bits of rank {@code rank}'s input element {@code i} (of {@code ranks}). */
    public static long input(DataType type, int pattern, int ranks, int rank, long i, long seed) {
        long h = mix(seed * 31 + rank * 1_000_003L + i);
        if (pattern == EXACT) {
            int limit = isFp8(type) ? 2 : 4;
            long v = Math.floorMod(h, 2 * limit + 1) - limit;
            if (type.isUnsigned()) {
                v = Math.abs(v);
            }
            return FloatFormats.fromDouble(type, v);
        }
        if (!type.isFloatingPoint()) {
            return mask(type, h);
        }
        if (Math.floorMod(i, ranks) != rank) {
            return 0;
        }
        while (true) { // a random finite value of the type
            long bits = mask(type, h);
            if (Double.isFinite(FloatFormats.toDouble(type, bits))) {
                return bits;
            }
            h = mix(h);
        }
    }

    /** The expected raw result of element {@code i}: the sum over ranks of each input times the scalar's bits. */
    public static long expected(DataType type, int pattern, int ranks, long i, long seed, long scalarBits, int[] onlyRanks) {
        if (!type.isFloatingPoint()) {
            long sum = 0;
            for (int r : onlyRanks) {
                sum += signed(type, input(type, pattern, ranks, r, i, seed)) * signed(type, scalarBits);
            }
            return mask(type, sum); // wrapping, as the type's own arithmetic
        }
        double s = FloatFormats.toDouble(type, scalarBits);
        double sum = 0;
        boolean first = true;
        for (int r : onlyRanks) {
            double x = FloatFormats.toDouble(type, input(type, pattern, ranks, r, i, seed));
            double product = FloatFormats.toDouble(type, round(type, x * s));
            sum = first ? product : sum + product; // exact (see the class comment), zeros keep IEEE signs
            first = false;
        }
        return round(type, sum);
    }

    /** Every rank, in order. */
    public static int[] all(int ranks) {
        int[] r = new int[ranks];
        for (int k = 0; k < ranks; k++) {
            r[k] = k;
        }
        return r;
    }

    /** {@code x} rounded once to {@code type}: the double product of two elements is exact for every narrower type. */
    private static long round(DataType type, double x) {
        if (type == DataType.FLOAT32) {
            return Float.floatToRawIntBits((float) x) & 0xFFFFFFFFL;
        }
        return FloatFormats.fromDouble(type, x);
    }

    public static long mask(DataType type, long v) {
        return type.size() == 8 ? v : v & ((1L << (8 * type.size())) - 1);
    }

    private static long signed(DataType type, long bits) {
        int shift = 64 - 8 * type.size();
        return (bits << shift) >> shift; // sign- or zero-extension gives the same low bits of the product
    }

    public static boolean isFp8(DataType type) {
        return type == DataType.FLOAT8E4M3 || type == DataType.FLOAT8E5M2;
    }

    private static long mix(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    public static ByteBuffer buffer(long elements, DataType type) {
        return ByteBuffer.allocateDirect((int) (elements * type.size())).order(ByteOrder.nativeOrder());
    }

    public static void put(ByteBuffer b, DataType type, long i, long bits) {
        int at = (int) (i * type.size());
        switch (type.size()) {
            case 1: b.put(at, (byte) bits); break;
            case 2: b.putShort(at, (short) bits); break;
            case 4: b.putInt(at, (int) bits); break;
            default: b.putLong(at, bits);
        }
    }

    public static long get(ByteBuffer b, DataType type, long i) {
        int at = (int) (i * type.size());
        switch (type.size()) {
            case 1: return b.get(at) & 0xFFL;
            case 2: return b.getShort(at) & 0xFFFFL;
            case 4: return b.getInt(at) & 0xFFFFFFFFL;
            default: return b.getLong(at);
        }
    }
}
