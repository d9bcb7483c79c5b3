package io.flexlink.verify;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Inputs and exact results of a PreMulSum with nccl-tests' scalars: 1 on even ranks, 2 on odd ranks. Integer
 * inputs take any bits ({@link DataPattern}'s, wrapping products and sums are exact in any order); a
 * floating-point input is {@link DataPattern}'s SUM value divided by its rank's scalar (a small integer or a
 * half, exact in every type), so that each product is SUM's small integer and every partial sum is as exact as
 * SUM's: results do not depend on the order of additions and compare bit for bit.
 */
public final class PreMulSumPattern {
    private PreMulSumPattern() {
    }

    /** Rank {@code rank}'s scalar (nccl-tests' {@code ncclVerifiablePremulScalar}). */
    public static double scalar(int rank) {
        return rank % 2 == 0 ? 1 : 2;
    }

    /** Raw bits of element {@code index} of rank {@code rank}'s input. */
    public static long value(DataType type, long seed, int ranks, int rank, long index) {
        long sum = DataPattern.value(type, ReduceOp.SUM, seed, ranks, rank, index);
        if (!type.isFloatingPoint()) {
            return sum;
        }
        return FloatFormats.fromDouble(type, FloatFormats.toDouble(type, sum) / scalar(rank));
    }

    /** Raw bits of the PreMulSum over every rank's element {@code index}. */
    public static long reduce(DataType type, long seed, int ranks, long index) {
        if (!type.isFloatingPoint()) {
            long acc = 0;
            for (int r = 0; r < ranks; r++) {
                acc += value(type, seed, ranks, r, index) * (long) scalar(r); // wraps like the type, low bits
            }
            return acc & DataPattern.mask(type);
        }
        double acc = 0;
        for (int r = 0; r < ranks; r++) {
            acc += FloatFormats.toDouble(type, value(type, seed, ranks, r, index)) * scalar(r);
        }
        return FloatFormats.fromDouble(type, acc);
    }

    /** Writes {@code count} elements starting at {@code first} of rank {@code rank}'s input into {@code dst}. */
    public static void fill(ByteBuffer dst, DataType type, long seed, int ranks, int rank, long first, long count) {
        ByteBuffer b = dst.duplicate().order(ByteOrder.nativeOrder());
        for (long i = 0; i < count; i++) {
            DataPattern.put(b, type, value(type, seed, ranks, rank, first + i));
        }
    }
}
