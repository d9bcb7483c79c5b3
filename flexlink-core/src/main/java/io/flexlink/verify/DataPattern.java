package io.flexlink.verify;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Input data whose collective results can be computed exactly: each element is a pure function of
 * (seed, rank, index), so any element of any rank's input, and so any expected output element, is known
 * without storing the inputs. Values are random, never all zeros, and chosen per operation so that every
 * partial result is exactly representable in the type: integers take any bits (wrap-around arithmetic is
 * exact), floating-point sums add small integers, averages add small multiples of the rank count (each
 * divided by it first, as the average does, is a small integer), products multiply ±1 and ±2, and max/min see any finite value (but not -0, whose order against +0 is
 * unspecified). Then results do not depend on reduction
 * order, and a correct implementation matches the reference bit for bit.
 */
public final class DataPattern {
    private DataPattern() {
    }

    /**
     * The operation that picks the value profile: the call's operation for reductions, MAX (any finite
     * value) for collectives that only move data.
     */
    public static ReduceOp dataOp(io.flexlink.Collective collective, ReduceOp op) {
        return collective.reduces() ? op : ReduceOp.MAX;
    }

    /** A stateless 64-bit mix (splitmix64's finalizer) of seed, rank and index. */
    static long mix(long seed, int rank, long index) {
        long z = seed * 0x9E3779B97F4A7C15L + (rank + 1L) * 0xBF58476D1CE4E5B9L + index * 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The raw bits (zero-extended) of element {@code index} of rank {@code rank}'s input, of {@code ranks}. */
    public static long value(DataType type, ReduceOp op, long seed, int ranks, int rank, long index) {
        long r = mix(seed, rank, index);
        if (!type.isFloatingPoint()) {
            return r & mask(type);
        }
        double v;
        switch (op) {
            case SUM:
                v = smallInteger(type, r);
                break;
            case AVG:
                // a multiple of the rank count: each input divided by it (the average divides first) is
                // SUM's small integer, and every partial sum is as exact as SUM's
                v = ranks * smallInteger(type, r);
                break;
            case PROD:
                v = ((r & 1) == 0 ? 1 : 2) * ((r & 2) == 0 ? 1 : -1);
                break;
            default:
                return finiteBits(type, r);
        }
        return FloatFormats.fromDouble(type, v);
    }

    /** Small integers keep every partial sum exact, even in fp8 e5m2 (2 mantissa bits: |sum| <= 8). */
    private static double smallInteger(DataType type, long r) {
        return type == DataType.FLOAT8E5M2 ? Math.floorMod(r, 3) - 1 : Math.floorMod(r, 5) - 2;
    }

    /** Random finite bits of a floating-point type, never NaN, infinity or -0. */
    private static long finiteBits(DataType type, long r) {
        for (int i = 0; ; i++) {
            long bits = (r >>> i | r << (64 - i)) & mask(type);
            double d = FloatFormats.toDouble(type, bits);
            if (!Double.isNaN(d) && !Double.isInfinite(d) && !(d == 0 && bits != 0)) {
                return bits;
            }
        }
    }

    /** All-ones mask of the type's width. */
    public static long mask(DataType type) {
        return type.size() == 8 ? -1L : (1L << (8 * type.size())) - 1;
    }

    /** Writes {@code count} elements starting at {@code first} of rank {@code rank}'s input into {@code dst}. */
    public static void fill(ByteBuffer dst, DataType type, ReduceOp op, long seed, int ranks, int rank, long first,
                            long count) {
        ByteBuffer b = dst.duplicate().order(ByteOrder.nativeOrder());
        for (long i = 0; i < count; i++) {
            put(b, type, value(type, op, seed, ranks, rank, first + i));
        }
    }

    /** Writes one element's raw bits at the buffer's position, in native order. */
    public static void put(ByteBuffer b, DataType type, long bits) {
        switch (type.size()) {
            case 1: b.put((byte) bits); break;
            case 2: b.putShort((short) bits); break;
            case 4: b.putInt((int) bits); break;
            default: b.putLong(bits);
        }
    }

    /** Reads the element {@code index} (in elements) of {@code b} as zero-extended raw bits. */
    public static long get(ByteBuffer b, DataType type, long index) {
        int at = (int) (index * type.size());
        switch (type.size()) {
            case 1: return b.get(at) & 0xffL;
            case 2: return b.getShort(at) & 0xffffL;
            case 4: return b.getInt(at) & 0xffffffffL;
            default: return b.getLong(at);
        }
    }
}
