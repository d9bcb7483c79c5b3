package io.flexlink.runtime.host;

import static io.flexlink.runtime.host.HostReduce.U;

import io.flexlink.ReduceOp;

/**
 * FLOAT32/FLOAT64 loops of {@link HostReduce}, plus the float MAX/MIN rule that the narrow formats
 * share. Results are stored as raw bits so that NaN is canonicalized explicitly instead of relying on
 * how a CPU propagates payloads.
 */
final class HostReduceFloat {
    static final int F32_NAN = 0x7FFFFFFF;
    static final long F64_NAN = 0x7FFFFFFFFFFFFFFFL;

    private HostReduceFloat() {
    }

    static void float32(long d, long a, long b, long n, ReduceOp op, int div) {
        long bytes = n << 2;
        float fdiv = div;
        switch (op) {
            case SUM:
                for (long o = 0; o < bytes; o += 4) {
                    U.putInt(d + o, bits(U.getFloat(a + o) + U.getFloat(b + o)));
                }
                return;
            case PROD:
                for (long o = 0; o < bytes; o += 4) {
                    U.putInt(d + o, bits(U.getFloat(a + o) * U.getFloat(b + o)));
                }
                return;
            case MAX:
                for (long o = 0; o < bytes; o += 4) {
                    U.putInt(d + o, bits(max(U.getFloat(a + o), U.getFloat(b + o))));
                }
                return;
            case MIN:
                for (long o = 0; o < bytes; o += 4) {
                    U.putInt(d + o, bits(min(U.getFloat(a + o), U.getFloat(b + o))));
                }
                return;
            case AVG:
                if (div > 0) {
                    for (long o = 0; o < bytes; o += 4) {
                        U.putInt(d + o, bits(U.getFloat(a + o) / fdiv + U.getFloat(b + o) / fdiv));
                    }
                } else {
                    for (long o = 0; o < bytes; o += 4) {
                        U.putInt(d + o, bits(U.getFloat(a + o) + U.getFloat(b + o) / -fdiv));
                    }
                }
                return;
            default:
                throw new AssertionError(op);
        }
    }

    static void float64(long d, long a, long b, long n, ReduceOp op, int div) {
        long bytes = n << 3;
        double ddiv = div;
        switch (op) {
            case SUM:
                for (long o = 0; o < bytes; o += 8) {
                    U.putLong(d + o, bits(U.getDouble(a + o) + U.getDouble(b + o)));
                }
                return;
            case PROD:
                for (long o = 0; o < bytes; o += 8) {
                    U.putLong(d + o, bits(U.getDouble(a + o) * U.getDouble(b + o)));
                }
                return;
            case MAX:
                for (long o = 0; o < bytes; o += 8) {
                    U.putLong(d + o, bits(max(U.getDouble(a + o), U.getDouble(b + o))));
                }
                return;
            case MIN:
                for (long o = 0; o < bytes; o += 8) {
                    U.putLong(d + o, bits(min(U.getDouble(a + o), U.getDouble(b + o))));
                }
                return;
            case AVG:
                if (div > 0) {
                    for (long o = 0; o < bytes; o += 8) {
                        U.putLong(d + o, bits(U.getDouble(a + o) / ddiv + U.getDouble(b + o) / ddiv));
                    }
                } else {
                    for (long o = 0; o < bytes; o += 8) {
                        U.putLong(d + o, bits(U.getDouble(a + o) + U.getDouble(b + o) / -ddiv));
                    }
                }
                return;
            default:
                throw new AssertionError(op);
        }
    }

    static int bits(float r) {
        return r != r ? F32_NAN : Float.floatToRawIntBits(r);
    }

    static long bits(double r) {
        return r != r ? F64_NAN : Double.doubleToRawLongBits(r);
    }

    /** fmaxf: a NaN operand yields the other; of +0 and -0 the larger is +0 (AND of the bits). */
    static float max(float x, float y) {
        if (x != x) {
            return y;
        }
        if (y != y || x > y) {
            return x;
        }
        if (y > x) {
            return y;
        }
        return Float.intBitsToFloat(Float.floatToRawIntBits(x) & Float.floatToRawIntBits(y));
    }

    /** fminf: a NaN operand yields the other; of +0 and -0 the smaller is -0 (OR of the bits). */
    static float min(float x, float y) {
        if (x != x) {
            return y;
        }
        if (y != y || x < y) {
            return x;
        }
        if (y < x) {
            return y;
        }
        return Float.intBitsToFloat(Float.floatToRawIntBits(x) | Float.floatToRawIntBits(y));
    }

    static double max(double x, double y) {
        if (x != x) {
            return y;
        }
        if (y != y || x > y) {
            return x;
        }
        if (y > x) {
            return y;
        }
        return Double.longBitsToDouble(Double.doubleToRawLongBits(x) & Double.doubleToRawLongBits(y));
    }

    static double min(double x, double y) {
        if (x != x) {
            return y;
        }
        if (y != y || x < y) {
            return x;
        }
        if (y < x) {
            return y;
        }
        return Double.longBitsToDouble(Double.doubleToRawLongBits(x) | Double.doubleToRawLongBits(y));
    }
}
