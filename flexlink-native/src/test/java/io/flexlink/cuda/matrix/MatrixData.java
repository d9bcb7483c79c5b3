package io.flexlink.cuda.matrix;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The GPU matrix's data: small integers (±1 and ±2 for products, multiples of the rank count for averages)
 * so that every result is exact in every type, computed by cheap closed forms so that inputs and expected
 * outputs of millions of elements are made in milliseconds, and never the poison pattern.
 */
final class MatrixData {
    /** Input profiles. */
    static final int SMALL = 0;
    static final int PRODUCT = 1;
    static final int AVERAGE = 2;

    private MatrixData() {
    }

    static int profile(ReduceOp op, boolean reduces) {
        if (!reduces) {
            return SMALL;
        }
        return op == ReduceOp.PROD ? PRODUCT : op == ReduceOp.AVG ? AVERAGE : SMALL;
    }

    /** Rank {@code r}'s element {@code i} of a profile, as a small integer. */
    static int value(int profile, DataType type, int ranks, int r, long i) {
        int s = (int) Math.floorMod(i * 7 + r * 3 + (i >>> 5), 5L) - 2;
        switch (profile) {
            case PRODUCT:
                return (((i + r) & 1) == 0 ? 1 : 2) * ((((i >>> 1) + r) & 1) == 0 ? 1 : -1);
            case AVERAGE:
                return type.isFloatingPoint() ? ranks * s : s;
            default:
                return s;
        }
    }

    /** The bits of small integer {@code v} in {@code type} (two's complement for integers). */
    static long bits(DataType type, long v) {
        if (!type.isFloatingPoint()) {
            return type.size() == 8 ? v : v & ((1L << (8 * type.size())) - 1);
        }
        return FloatFormats.fromDouble(type, v);
    }

    /** Encodings of -64..64, looked up instead of converted per element. */
    static long[] table(DataType type) {
        long[] t = new long[129];
        for (int v = -64; v <= 64; v++) {
            t[v + 64] = bits(type, v);
        }
        return t;
    }

    static ByteBuffer buffer(long bytes) {
        return ByteBuffer.allocateDirect((int) Math.max(1, bytes)).order(ByteOrder.nativeOrder());
    }

    static void put(ByteBuffer b, int sz, long i, long bits) {
        int at = (int) (i * sz);
        switch (sz) {
            case 1: b.put(at, (byte) bits); break;
            case 2: b.putShort(at, (short) bits); break;
            case 4: b.putInt(at, (int) bits); break;
            default: b.putLong(at, bits);
        }
    }

    static long get(ByteBuffer b, int sz, long i) {
        int at = (int) (i * sz);
        switch (sz) {
            case 1: return b.get(at) & 0xffL;
            case 2: return b.getShort(at) & 0xffffL;
            case 4: return b.getInt(at) & 0xffffffffL;
            default: return b.getLong(at);
        }
    }

    /** Rank {@code r}'s input of a profile, {@code n} elements. */
    static ByteBuffer input(int profile, DataType type, int ranks, int r, long n) {
        long[] t = table(type);
        int sz = type.size();
        ByteBuffer b = buffer(n * sz);
        for (long i = 0; i < n; i++) {
            put(b, sz, i, t[value(profile, type, ranks, r, i) + 64]);
        }
        return b;
    }

    /** The reduction over {@code ranks} ranks of element {@code i}, as NCCL defines {@code op} for {@code type}. */
    static long reduced(DataType type, ReduceOp op, int ranks, long i, long[] table) {
        int profile = profile(op, true);
        boolean unsigned = type.isUnsigned();
        long mask = type.size() == 8 ? -1L : (1L << (8 * type.size())) - 1;
        long acc = 0;
        long key = 0;
        for (int r = 0; r < ranks; r++) {
            long v = value(profile, type, ranks, r, i);
            switch (op) {
                case PROD:
                    acc = r == 0 ? v : acc * v;
                    break;
                case MAX:
                case MIN: {
                    long k = unsigned ? v & mask : v; // integers compare by their type's signedness
                    int cmp = unsigned ? Long.compareUnsigned(k, key) : Long.compare(k, key);
                    if (r == 0 || (op == ReduceOp.MAX ? cmp > 0 : cmp < 0)) {
                        key = k;
                        acc = v;
                    }
                    break;
                }
                default:
                    acc += v;
            }
        }
        if (op == ReduceOp.AVG) {
            if (type.isFloatingPoint()) {
                return table[(int) (acc / ranks) + 64]; // inputs were n times the small integers: exact
            }
            long sum = acc & mask;
            long q = unsigned ? Long.divideUnsigned(sum, ranks) : (type.size() == 8 ? acc : signExtend(sum, type)) / ranks;
            return q & mask;
        }
        return type.isFloatingPoint() ? table[(int) acc + 64] : acc & mask;
    }

    private static long signExtend(long v, DataType type) {
        int shift = 64 - 8 * type.size();
        return v << shift >> shift;
    }

    /** Expected reductions of elements {@code [0, n)}. */
    static ByteBuffer reduced(DataType type, ReduceOp op, int ranks, long n) {
        long[] t = table(type);
        int sz = type.size();
        ByteBuffer b = buffer(n * sz);
        for (long i = 0; i < n; i++) {
            put(b, sz, i, reduced(type, op, ranks, i, t));
        }
        return b;
    }
}
