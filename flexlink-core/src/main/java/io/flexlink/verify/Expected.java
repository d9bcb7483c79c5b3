package io.flexlink.verify;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.FloatFormats;

/**
 * The exact expected output of each collective for inputs from {@link DataPattern}, computed element by
 * element with NCCL's semantics: integer arithmetic wraps, AVG divides the (wrapped) sum by the number of
 * ranks truncating, and floating-point results are rounded once to the type (fp8 saturating). A
 * floating-point AVG, which divides each input before adding, gives the same bits as the sum divided
 * here, because {@link DataPattern}'s inputs are multiples of the rank count: every quotient and partial
 * sum is exact.
 */
public final class Expected {
    private Expected() {
    }

    /** Raw bits of {@code op} over every rank's element {@code index}. */
    public static long reduce(DataType type, ReduceOp op, long seed, int ranks, long index) {
        if (!type.isFloatingPoint()) {
            return reduceInteger(type, op, seed, ranks, index);
        }
        double acc = FloatFormats.toDouble(type, DataPattern.value(type, op, seed, ranks, 0, index));
        for (int r = 1; r < ranks; r++) {
            double v = FloatFormats.toDouble(type, DataPattern.value(type, op, seed, ranks, r, index));
            switch (op) {
                case SUM:
                case AVG: acc += v; break;
                case PROD: acc *= v; break;
                case MAX: acc = Math.max(acc, v); break;
                default: acc = Math.min(acc, v);
            }
        }
        if (op == ReduceOp.AVG) {
            acc /= ranks;
        }
        return FloatFormats.fromDouble(type, acc);
    }

    private static long reduceInteger(DataType type, ReduceOp op, long seed, int ranks, long index) {
        long mask = DataPattern.mask(type);
        int bits = 8 * type.size();
        long acc = signExtend(type, DataPattern.value(type, op, seed, ranks, 0, index), bits);
        for (int r = 1; r < ranks; r++) {
            long v = signExtend(type, DataPattern.value(type, op, seed, ranks, r, index), bits);
            switch (op) {
                case SUM:
                case AVG: acc += v; break;
                case PROD: acc *= v; break;
                case MAX: acc = type.isUnsigned() ? unsignedMax(acc, v) : Math.max(acc, v); break;
                default: acc = type.isUnsigned() ? unsignedMin(acc, v) : Math.min(acc, v);
            }
            acc = signExtend(type, acc & mask, bits);
        }
        if (op == ReduceOp.AVG) {
            acc = type.isUnsigned() ? Long.divideUnsigned(acc & mask, ranks) : acc / ranks;
        }
        return acc & mask;
    }

    /** Signed types are sign-extended, unsigned ones zero-extended, so Java long arithmetic wraps like the type. */
    private static long signExtend(DataType type, long raw, int bits) {
        if (type.isUnsigned() || bits == 64) {
            return raw;
        }
        return (raw << (64 - bits)) >> (64 - bits);
    }

    private static long unsignedMax(long a, long b) {
        return Long.compareUnsigned(a, b) >= 0 ? a : b;
    }

    private static long unsignedMin(long a, long b) {
        return Long.compareUnsigned(a, b) <= 0 ? a : b;
    }

    /**
     * Raw bits of element {@code index} of rank {@code rank}'s output buffer for {@code collective},
     * where {@code count} is the per-rank count as {@link io.flexlink.Communicator} takes it.
     */
    public static long output(Collective collective, DataType type, ReduceOp op, long seed, int ranks, int rank,
                              int root, long count, long index) {
        op = DataPattern.dataOp(collective, op);
        switch (collective) {
            case ALL_REDUCE:
            case REDUCE:
                return reduce(type, op, seed, ranks, index);
            case ALL_GATHER:
                return DataPattern.value(type, op, seed, ranks, (int) (index / count), index % count);
            case REDUCE_SCATTER:
                return reduce(type, op, seed, ranks, (long) rank * count + index);
            case ALL_TO_ALL:
                // block p of rank r's output is block r of rank p's input
                return DataPattern.value(type, op, seed, ranks, (int) (index / count), rank * count + index % count);
            case GATHER:
                return DataPattern.value(type, op, seed, ranks, (int) (index / count), index % count);
            case SCATTER:
                return DataPattern.value(type, op, seed, ranks, root, rank * count + index);
            default:
                return DataPattern.value(type, op, seed, ranks, root, index);
        }
    }

    /** Elements of one rank's input buffer. */
    public static long inputCount(Collective c, long count, int ranks) {
        return c == Collective.REDUCE_SCATTER || c == Collective.ALL_TO_ALL || c == Collective.SCATTER
                ? count * ranks : count;
    }

    /** Elements of one rank's output buffer. */
    public static long outputCount(Collective c, long count, int ranks) {
        return c == Collective.ALL_GATHER || c == Collective.ALL_TO_ALL || c == Collective.GATHER
                ? count * ranks : count;
    }

    /** True when rank {@code rank} writes its output in {@code c} (Reduce and Gather: the root only). */
    public static boolean writes(Collective c, int rank, int root) {
        return (c != Collective.REDUCE && c != Collective.GATHER) || rank == root;
    }

    /** True when rank {@code rank} reads its input in {@code c} (Broadcast and Scatter: the root only). */
    public static boolean reads(Collective c, int rank, int root) {
        return (c != Collective.BROADCAST && c != Collective.SCATTER) || rank == root;
    }
}
