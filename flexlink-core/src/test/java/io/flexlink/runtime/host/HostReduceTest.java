package io.flexlink.runtime.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.host.FloatFormatsTest.Fmt;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import sun.misc.Unsafe;

/** HostReduce against a per-element reference written with BigInteger/BigDecimal/double arithmetic. */
class HostReduceTest {
    private static final Unsafe U = HostReduce.U;
    private static final int[] DIVISORS = {1, 2, 3, 7, 8};
    private static final float[] F32_EDGES = {0f, -0f, 1f, -1f, 0.5f, Float.MAX_VALUE, -Float.MAX_VALUE,
        Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
        Float.NaN, Float.intBitsToFloat(0xFFC00001), 3e38f, 1e-40f};
    private static final double[] F64_EDGES = {0.0, -0.0, 1.0, -1.0, 0.1, Double.MAX_VALUE, -Double.MAX_VALUE,
        Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY, Double.NaN, Double.longBitsToDouble(0xFFF8000000000123L), 1e308, 1e-310};

    private long mem;

    @AfterEach
    void free() {
        if (mem != 0) {
            U.freeMemory(mem);
            mem = 0;
        }
    }

    /** Random bit patterns (NaN, inf, subnormals, extremes included) for every type, op and divisor. */
    @ParameterizedTest
    @EnumSource(DataType.class)
    void randomDataMatchesReference(DataType t) {
        Random rnd = new Random(1000 + t.ordinal());
        int n = 4099;
        long[] x = new long[n];
        long[] y = new long[n];
        for (int i = 0; i < n; i++) {
            x[i] = element(t, rnd, i);
            y[i] = element(t, rnd, i + 1);
        }
        checkAllOps(t, x, y, n);
    }

    /** Every pair of FP8 values, every op: the whole input space. */
    @ParameterizedTest
    @EnumSource(value = DataType.class, names = {"FLOAT8E4M3", "FLOAT8E5M2"})
    void fp8AllPairs(DataType t) {
        long[] x = new long[1 << 16];
        long[] y = new long[1 << 16];
        for (int i = 0; i < x.length; i++) {
            x[i] = i >>> 8;
            y[i] = i & 0xFF;
        }
        for (ReduceOp op : ReduceOp.values()) {
            check(t, op, op == ReduceOp.AVG ? 3 : 1, x, y, x.length);
        }
        check(t, ReduceOp.AVG, -3, x, y, x.length);
    }

    /** Edge pairs for the wide float types: every edge against every edge. */
    @Test
    void floatEdgePairs() {
        int n = F32_EDGES.length * F32_EDGES.length;
        long[] x32 = new long[n];
        long[] y32 = new long[n];
        long[] x64 = new long[n];
        long[] y64 = new long[n];
        for (int i = 0; i < n; i++) {
            x32[i] = Float.floatToRawIntBits(F32_EDGES[i / F32_EDGES.length]) & 0xFFFFFFFFL;
            y32[i] = Float.floatToRawIntBits(F32_EDGES[i % F32_EDGES.length]) & 0xFFFFFFFFL;
            x64[i] = Double.doubleToRawLongBits(F64_EDGES[i / F64_EDGES.length]);
            y64[i] = Double.doubleToRawLongBits(F64_EDGES[i % F64_EDGES.length]);
        }
        checkAllOps(DataType.FLOAT32, x32, y32, n);
        checkAllOps(DataType.FLOAT64, x64, y64, n);
    }

    @Test
    void knownResults() {
        assertEquals(0x80, one(DataType.INT8, ReduceOp.SUM, 1, 0x7F, 0x01)); // wraps
        assertEquals(0x7F, one(DataType.UINT8, ReduceOp.AVG, 2, 0xFF, 0xFF)); // (510 mod 256) / 2
        assertEquals(0xFF, one(DataType.INT8, ReduceOp.AVG, 2, 0xFF, 0xFE)); // -3 / 2 = -1, truncating
        assertEquals(0xFF, one(DataType.UINT8, ReduceOp.MAX, 1, 0xFF, 0x01)); // unsigned compare
        assertEquals(0x01, one(DataType.INT8, ReduceOp.MAX, 1, 0xFF, 0x01)); // signed compare
        assertEquals(0x7FFFFFFFFFFFFFFFL, one(DataType.UINT64, ReduceOp.AVG, 2, -1L, 0L));
        assertEquals(0x3C00, one(DataType.FLOAT16, ReduceOp.MAX, 1, 0x7E00, 0x3C00)); // NaN yields the other
        assertEquals(0x7FFF, one(DataType.FLOAT16, ReduceOp.SUM, 1, 0x7C00, 0xFC00)); // inf - inf: canonical
        assertEquals(0x7C00, one(DataType.FLOAT16, ReduceOp.SUM, 1, 0x7BFF, 0x7BFF)); // overflow: inf
        assertEquals(0x7E, one(DataType.FLOAT8E4M3, ReduceOp.SUM, 1, 0x7E, 0x7E)); // 896 saturates to 448
        assertEquals(0x7B, one(DataType.FLOAT8E5M2, ReduceOp.PROD, 1, 0x7B, 0x7B)); // saturates
        assertEquals(0x7F, one(DataType.FLOAT8E5M2, ReduceOp.SUM, 1, 0x7C, 0xFC)); // inf - inf: NaN
        assertEquals(0x0000, one(DataType.BFLOAT16, ReduceOp.MAX, 1, 0x8000, 0x0000)); // +0 > -0
        assertEquals(0x8000, one(DataType.BFLOAT16, ReduceOp.MIN, 1, 0x0000, 0x8000));
        assertEquals(Float.floatToRawIntBits(1.5f), one(DataType.FLOAT32, ReduceOp.AVG, 2,
                Float.floatToRawIntBits(1f), Float.floatToRawIntBits(2f)));
        // AVG divides before adding: no overflow where the sum itself would not fit the type
        assertEquals(0x7BFF, one(DataType.FLOAT16, ReduceOp.AVG, 2, 0x7BFF, 0x7BFF)); // (65504 + 65504) / 2
        assertEquals(0x7E, one(DataType.FLOAT8E4M3, ReduceOp.AVG, -2, 0x7E, 0x7E)); // 448 + 448 / 2 saturates
        assertEquals(Float.floatToRawIntBits(3f), one(DataType.FLOAT32, ReduceOp.AVG, -2,
                Float.floatToRawIntBits(2f), Float.floatToRawIntBits(2f))); // running average: a + b / 2
        assertEquals(0x7FFFFFFFL, one(DataType.FLOAT32, ReduceOp.MIN, 1, 0xFFC00000L, 0x7FC00001L));
    }

    /** count 0, 1 and odd counts; dst == a and dst == b; unaligned addresses. */
    @ParameterizedTest
    @EnumSource(DataType.class)
    void countsInPlaceAndAlignment(DataType t) {
        Random rnd = new Random(77 + t.ordinal());
        int size = t.size();
        for (int n : new int[] {0, 1, 2, 3, 17, 255}) {
            for (int mode = 0; mode < 3; mode++) { // 0: separate dst, 1: dst == a, 2: dst == b
                long[] x = new long[n];
                long[] y = new long[n];
                for (int i = 0; i < n; i++) {
                    x[i] = element(t, rnd, i);
                    y[i] = element(t, rnd, i + 2);
                }
                ReduceOp op = ReduceOp.values()[rnd.nextInt(ReduceOp.values().length)];
                int div = 1 + rnd.nextInt(5);
                long bytes = (long) n * size;
                mem = U.allocateMemory(3 * bytes + 64);
                long a = mem + 1; // deliberately unaligned
                long b = a + bytes + 3;
                long d = mode == 1 ? a : mode == 2 ? b : b + bytes + 5;
                long sentinel = d + bytes; // a gap byte in every layout
                U.putByte(sentinel, (byte) 0x5A);
                write(t, a, x);
                write(t, b, y);
                HostReduce.reduce(d, a, b, n, t, op, div);
                for (int i = 0; i < n; i++) {
                    long expected = reference(t, op, div, x[i], y[i]);
                    assertEquals(expected, read(t, d, i), msg(t, op, div, x[i], y[i]) + " n=" + n + " mode=" + mode);
                }
                assertEquals((byte) 0x5A, U.getByte(sentinel), "wrote past the end");
                free();
            }
        }
    }

    @Test
    void rejectsBadArguments() {
        assertThrows(FlexLinkException.class, () -> HostReduce.reduce(0, 0, 0, 1, DataType.FLOAT32, ReduceOp.AVG, 0));
        assertThrows(FlexLinkException.class, () -> HostReduce.reduce(0, 0, 0, 1, DataType.INT32, ReduceOp.AVG, -2));
        assertThrows(FlexLinkException.class, () -> HostReduce.reduce(0, 0, 0, -1, DataType.FLOAT32, ReduceOp.SUM, 1));
        HostReduce.reduce(0, 0, 0, 0, DataType.FLOAT32, ReduceOp.SUM, 1); // nothing to touch
    }

    // ------------------------------------------------------------------ harness

    /** Every op; the divisor must be ignored by all but AVG, which gets several. */
    private void checkAllOps(DataType t, long[] x, long[] y, int n) {
        for (ReduceOp op : ReduceOp.values()) {
            if (op != ReduceOp.AVG) {
                check(t, op, 5, x, y, n);
            }
        }
        for (int div : DIVISORS) {
            check(t, ReduceOp.AVG, div, x, y, n);
            if (t.isFloatingPoint()) {
                check(t, ReduceOp.AVG, -div, x, y, n); // the running-average step of ReduceChain
            }
        }
    }

    private void check(DataType t, ReduceOp op, int div, long[] x, long[] y, int n) {
        long bytes = (long) n * t.size();
        mem = U.allocateMemory(3 * bytes + 1);
        long a = mem;
        long b = a + bytes;
        long d = b + bytes;
        write(t, a, x);
        write(t, b, y);
        HostReduce.reduce(d, a, b, n, t, op, div);
        for (int i = 0; i < n; i++) {
            long expected = reference(t, op, div, x[i], y[i]);
            long actual = read(t, d, i);
            if (expected != actual) {
                assertEquals(Long.toHexString(expected), Long.toHexString(actual), msg(t, op, div, x[i], y[i]));
            }
        }
        free();
    }

    private long one(DataType t, ReduceOp op, int div, long x, long y) {
        mem = U.allocateMemory(3L * t.size());
        write(t, mem, new long[] {x});
        write(t, mem + t.size(), new long[] {y});
        HostReduce.reduce(mem + 2L * t.size(), mem, mem + t.size(), 1, t, op, div);
        long r = read(t, mem + 2L * t.size(), 0);
        assertEquals(reference(t, op, div, x, y), r, "reference disagrees: " + msg(t, op, div, x, y));
        free();
        return r;
    }

    private static String msg(DataType t, ReduceOp op, int div, long x, long y) {
        return t + " " + op + " /" + div + " x=0x" + Long.toHexString(x) + " y=0x" + Long.toHexString(y);
    }

    /** Raw bits, zero-extended. A quarter are drawn from the type's interesting values. */
    private static long element(DataType t, Random rnd, int i) {
        long bits = rnd.nextLong();
        if (t == DataType.FLOAT32 && i % 4 == 0) {
            bits = Float.floatToRawIntBits(F32_EDGES[rnd.nextInt(F32_EDGES.length)]);
        } else if (t == DataType.FLOAT64 && i % 4 == 0) {
            bits = Double.doubleToRawLongBits(F64_EDGES[rnd.nextInt(F64_EDGES.length)]);
        } else if (t == DataType.FLOAT64 && i % 4 == 1) {
            bits = Double.doubleToRawLongBits(Math.scalb(rnd.nextGaussian(), rnd.nextInt(40) - 20));
        } else if (t == DataType.FLOAT32 && i % 4 == 1) {
            bits = Float.floatToRawIntBits((float) Math.scalb(rnd.nextGaussian(), rnd.nextInt(40) - 20));
        } else if (!t.isFloatingPoint() && i % 4 == 0) {
            long[] edges = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0x80, 0x7F, 0x80000000L, 0x7FFFFFFFL};
            bits = edges[rnd.nextInt(edges.length)];
        }
        return bits & mask(t);
    }

    private static long mask(DataType t) {
        return t.size() == 8 ? -1L : (1L << (8 * t.size())) - 1;
    }

    private static void write(DataType t, long addr, long[] v) {
        for (int i = 0; i < v.length; i++) {
            long p = addr + (long) i * t.size();
            switch (t.size()) {
                case 1: U.putByte(p, (byte) v[i]); break;
                case 2: U.putShort(p, (short) v[i]); break;
                case 4: U.putInt(p, (int) v[i]); break;
                default: U.putLong(p, v[i]);
            }
        }
    }

    private static long read(DataType t, long addr, int i) {
        long p = addr + (long) i * t.size();
        switch (t.size()) {
            case 1: return U.getByte(p) & 0xFFL;
            case 2: return U.getShort(p) & 0xFFFFL;
            case 4: return U.getInt(p) & 0xFFFFFFFFL;
            default: return U.getLong(p);
        }
    }

    // ------------------------------------------------------------------ the reference

    static long reference(DataType t, ReduceOp op, int div, long x, long y) {
        if (!t.isFloatingPoint()) {
            return intReference(t, op, div, x, y);
        }
        switch (t) {
            case FLOAT32: return f32Reference(op, div, x, y);
            case FLOAT64: return f64Reference(op, div, x, y);
            case FLOAT16: return narrowReference(Fmt.HALF, op, div, x, y);
            case BFLOAT16: return narrowReference(Fmt.BF16, op, div, x, y);
            case FLOAT8E4M3: return narrowReference(Fmt.E4M3, op, div, x, y);
            default: return narrowReference(Fmt.E5M2, op, div, x, y);
        }
    }

    /** Exact integers: wrap modulo 2^bits, interpret by signedness, divide truncating. */
    private static long intReference(DataType t, ReduceOp op, int div, long x, long y) {
        int bits = 8 * t.size();
        BigInteger mod = BigInteger.ONE.shiftLeft(bits);
        BigInteger bx = interpret(t, x);
        BigInteger by = interpret(t, y);
        BigInteger r;
        switch (op) {
            case SUM: r = bx.add(by); break;
            case PROD: r = bx.multiply(by); break;
            case MAX: r = bx.max(by); break;
            case MIN: r = bx.min(by); break;
            default: r = interpret(t, bx.add(by).mod(mod).longValue()).divide(BigInteger.valueOf(div));
        }
        return r.mod(mod).longValue();
    }

    private static BigInteger interpret(DataType t, long raw) {
        int bits = 8 * t.size();
        BigInteger u = new BigInteger(Long.toUnsignedString(raw & mask(t)));
        if (!t.isUnsigned() && u.testBit(bits - 1)) {
            return u.subtract(BigInteger.ONE.shiftLeft(bits));
        }
        return u;
    }

    /** Float in double: +, * and / of floats computed in double and rounded once more are exact. */
    private static long f32Reference(ReduceOp op, int div, long x, long y) {
        double a = Float.intBitsToFloat((int) x);
        double b = Float.intBitsToFloat((int) y);
        float r = (float) floatOp(op, div, a, b);
        return Float.isNaN(r) ? 0x7FFFFFFFL : Float.floatToRawIntBits(r) & 0xFFFFFFFFL;
    }

    private static double floatOp(ReduceOp op, int div, double a, double b) {
        switch (op) {
            case SUM: return (float) (a + b);
            case PROD: return (float) (a * b);
            case MAX: return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
            case MIN: return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.min(a, b);
            default: // AVG divides before adding: a/d + b/d, or a + b/|d| for d < 0; each step rounded to float
                return div > 0 ? (float) ((double) (float) (a / div) + (float) (b / div))
                        : (float) (a + (float) (b / -div));
        }
    }

    /** Double via BigDecimal (exact, then one rounding); IEEE special cases spelled out. */
    private static long f64Reference(ReduceOp op, int div, long x, long y) {
        double a = Double.longBitsToDouble(x);
        double b = Double.longBitsToDouble(y);
        double r;
        switch (op) {
            case SUM: r = exactSum(a, b); break;
            case PROD: r = exactProduct(a, b); break;
            case MAX: r = Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b); break;
            case MIN: r = Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.min(a, b); break;
            default: r = div > 0 ? exactSum(quotient(a, div), quotient(b, div)) : exactSum(a, quotient(b, -div));
        }
        return Double.isNaN(r) ? 0x7FFFFFFFFFFFFFFFL : Double.doubleToRawLongBits(r);
    }

    private static double exactSum(double a, double b) {
        if (!Double.isFinite(a) || !Double.isFinite(b)) {
            return a + b; // inf/NaN rules
        }
        BigDecimal s = new BigDecimal(a).add(new BigDecimal(b));
        if (s.signum() == 0) {
            return (Double.doubleToRawLongBits(a) & Double.doubleToRawLongBits(b)) < 0 ? -0.0 : 0.0;
        }
        return s.doubleValue();
    }

    private static double exactProduct(double a, double b) {
        if (!Double.isFinite(a) || !Double.isFinite(b)) {
            return a * b;
        }
        double r = new BigDecimal(a).multiply(new BigDecimal(b)).doubleValue();
        return r == 0 ? ((Double.doubleToRawLongBits(a) ^ Double.doubleToRawLongBits(b)) < 0 ? -0.0 : 0.0) : r;
    }

    private static double quotient(double s, int div) {
        if (!Double.isFinite(s) || s == 0) {
            return s / div;
        }
        BigDecimal q;
        try {
            q = new BigDecimal(s).divide(BigDecimal.valueOf(div)); // exact when it terminates (ties do)
        } catch (ArithmeticException nonTerminating) {
            q = new BigDecimal(s).divide(BigDecimal.valueOf(div), new MathContext(60)); // never near a tie
        }
        double r = q.doubleValue();
        return r == 0 ? Math.copySign(0.0, s) : r;
    }

    /** Narrow formats: values from the test's own decoder, computed like float, rounded by search. */
    private static long narrowReference(Fmt f, ReduceOp op, int div, long x, long y) {
        double a = f.value((int) x);
        double b = f.value((int) y);
        double r = floatOp(op, div, a, b);
        return f.round(r);
    }
}
