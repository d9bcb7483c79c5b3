package io.flexlink.runtime.host;

import static io.flexlink.runtime.host.HostReduce.U;

import io.flexlink.ReduceOp;

/**
 * Integer loops of {@link HostReduce}. SUM/PROD wrap (Java's int/long arithmetic already does);
 * signedness only matters for MAX/MIN and for AVG's division. One loop per (width, op, signedness),
 * so the JIT sees no per-element dispatch.
 */
final class HostReduceInt {
    private HostReduceInt() {
    }

    static void int8(long d, long a, long b, long n, ReduceOp op, int div, boolean unsigned) {
        switch (op) {
            case SUM:
                for (long i = 0; i < n; i++) {
                    U.putByte(d + i, (byte) (U.getByte(a + i) + U.getByte(b + i)));
                }
                return;
            case PROD:
                for (long i = 0; i < n; i++) {
                    U.putByte(d + i, (byte) (U.getByte(a + i) * U.getByte(b + i)));
                }
                return;
            case MAX:
            case MIN: {
                boolean max = op == ReduceOp.MAX;
                int mask = unsigned ? 0xFF : -1; // zero-extend for unsigned, keep the sign otherwise
                for (long i = 0; i < n; i++) {
                    byte x = U.getByte(a + i);
                    byte y = U.getByte(b + i);
                    boolean xBigger = (x & mask) > (y & mask);
                    U.putByte(d + i, xBigger == max ? x : y);
                }
                return;
            }
            case AVG:
                if (unsigned) {
                    for (long i = 0; i < n; i++) {
                        U.putByte(d + i, (byte) (((U.getByte(a + i) + U.getByte(b + i)) & 0xFF) / div));
                    }
                } else {
                    for (long i = 0; i < n; i++) {
                        U.putByte(d + i, (byte) ((byte) (U.getByte(a + i) + U.getByte(b + i)) / div));
                    }
                }
                return;
            default:
                throw new AssertionError(op);
        }
    }

    static void int32(long d, long a, long b, long n, ReduceOp op, int div, boolean unsigned) {
        long bytes = n << 2;
        switch (op) {
            case SUM:
                for (long o = 0; o < bytes; o += 4) {
                    U.putInt(d + o, U.getInt(a + o) + U.getInt(b + o));
                }
                return;
            case PROD:
                for (long o = 0; o < bytes; o += 4) {
                    U.putInt(d + o, U.getInt(a + o) * U.getInt(b + o));
                }
                return;
            case MAX:
            case MIN: {
                boolean max = op == ReduceOp.MAX;
                int flip = unsigned ? Integer.MIN_VALUE : 0; // x ^ MIN orders unsigned values as signed
                for (long o = 0; o < bytes; o += 4) {
                    int x = U.getInt(a + o);
                    int y = U.getInt(b + o);
                    boolean xBigger = (x ^ flip) > (y ^ flip);
                    U.putInt(d + o, xBigger == max ? x : y);
                }
                return;
            }
            case AVG:
                if (unsigned) {
                    for (long o = 0; o < bytes; o += 4) {
                        U.putInt(d + o, Integer.divideUnsigned(U.getInt(a + o) + U.getInt(b + o), div));
                    }
                } else {
                    for (long o = 0; o < bytes; o += 4) {
                        U.putInt(d + o, (U.getInt(a + o) + U.getInt(b + o)) / div);
                    }
                }
                return;
            default:
                throw new AssertionError(op);
        }
    }

    static void int64(long d, long a, long b, long n, ReduceOp op, int div, boolean unsigned) {
        long bytes = n << 3;
        switch (op) {
            case SUM:
                for (long o = 0; o < bytes; o += 8) {
                    U.putLong(d + o, U.getLong(a + o) + U.getLong(b + o));
                }
                return;
            case PROD:
                for (long o = 0; o < bytes; o += 8) {
                    U.putLong(d + o, U.getLong(a + o) * U.getLong(b + o));
                }
                return;
            case MAX:
            case MIN: {
                boolean max = op == ReduceOp.MAX;
                long flip = unsigned ? Long.MIN_VALUE : 0;
                for (long o = 0; o < bytes; o += 8) {
                    long x = U.getLong(a + o);
                    long y = U.getLong(b + o);
                    boolean xBigger = (x ^ flip) > (y ^ flip);
                    U.putLong(d + o, xBigger == max ? x : y);
                }
                return;
            }
            case AVG:
                if (unsigned) {
                    for (long o = 0; o < bytes; o += 8) {
                        U.putLong(d + o, Long.divideUnsigned(U.getLong(a + o) + U.getLong(b + o), div));
                    }
                } else {
                    for (long o = 0; o < bytes; o += 8) {
                        U.putLong(d + o, (U.getLong(a + o) + U.getLong(b + o)) / div);
                    }
                }
                return;
            default:
                throw new AssertionError(op);
        }
    }
}
