package io.flexlink.runtime.host;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.NativeMemory;
import sun.misc.Unsafe;

/**
 * The host backend's elementwise reduction over off-heap memory: {@code dst[i] = a[i] (op) b[i]}.
 *
 * <p>The results are bit-identical to the CUDA kernels in {@code io/flexlink/cuda/reduce.cu}
 * (flexlink-native), so that a collective gives the same bits on either backend:
 * <ul>
 *   <li>Integers: SUM and PROD wrap around (two's complement); MAX/MIN compare signed for
 *       INT8/INT32/INT64 and unsigned for UINT8/UINT32/UINT64; AVG divides the wrapped sum by
 *       {@code divisor}, truncating, signed or unsigned by type.</li>
 *   <li>FLOAT32/FLOAT64 compute in their own precision; FLOAT16, BFLOAT16 and both FP8 formats
 *       decode to float (exact), compute in float, and round back to nearest even
 *       ({@link FloatFormats}: half/bf16 overflow to infinity, FP8 saturates). AVG divides before it
 *       adds, as NCCL's pre-multiplied average does, so that partial sums never overflow: with
 *       {@code divisor > 0} it is {@code a / divisor + b / divisor} (two ranks' own inputs), with
 *       {@code divisor < 0} it is {@code a + b / |divisor|} (one more rank's input {@code b} added to a
 *       running average {@code a}); true IEEE divisions, not multiplications by a reciprocal.</li>
 *   <li>MAX/MIN of floating-point values follow CUDA's fmaxf/fminf: a NaN operand yields the other
 *       operand. Equal operands (only +0 and -0 differ in bits) give {@code +0} for MAX and
 *       {@code -0} for MIN, so the result never depends on operand order.</li>
 *   <li>Every NaN result is written as one canonical NaN per type (fp64 {@code 0x7FFFFFFFFFFFFFFF},
 *       fp32 {@code 0x7FFFFFFF}, fp16/bf16 {@code 0x7FFF}, FP8 {@code 0x7F}): CPUs and GPUs
 *       propagate NaN payloads and signs differently, so payloads are not kept.</li>
 * </ul>
 */
public final class HostReduce {
    static final Unsafe U = NativeMemory.UNSAFE;

    private HostReduce() {
    }

    /**
     * Computes {@code dst[i] = a[i] (op) b[i]} for {@code i} in {@code [0, count)}.
     *
     * @param dst      native address of the result; may equal {@code a} or {@code b} (in place), but
     *                 must not otherwise overlap them
     * @param a        native address of the first operand
     * @param b        native address of the second operand
     * @param count    number of elements
     * @param divisor  for {@link ReduceOp#AVG} only: the number of ranks (≥ 1), negated for floating-point
     *                 types to scale {@code b} alone (see the class comment); ignored otherwise
     */
    public static void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
        if (count < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "reduce: negative count " + count);
        }
        if (op == ReduceOp.AVG && (divisor == 0 || divisor < 0 && !type.isFloatingPoint())) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "reduce: AVG divisor must be >= 1"
                    + (type.isFloatingPoint() ? " or <= -1" : "") + " for " + type + ", got " + divisor);
        }
        if (count == 0) {
            return;
        }
        switch (type) {
            case INT8: HostReduceInt.int8(dst, a, b, count, op, divisor, false); break;
            case UINT8: HostReduceInt.int8(dst, a, b, count, op, divisor, true); break;
            case INT32: HostReduceInt.int32(dst, a, b, count, op, divisor, false); break;
            case UINT32: HostReduceInt.int32(dst, a, b, count, op, divisor, true); break;
            case INT64: HostReduceInt.int64(dst, a, b, count, op, divisor, false); break;
            case UINT64: HostReduceInt.int64(dst, a, b, count, op, divisor, true); break;
            case FLOAT32: HostReduceFloat.float32(dst, a, b, count, op, divisor); break;
            case FLOAT64: HostReduceFloat.float64(dst, a, b, count, op, divisor); break;
            case FLOAT16: HostReduceNarrow.bits16(dst, a, b, count, op, divisor, false); break;
            case BFLOAT16: HostReduceNarrow.bits16(dst, a, b, count, op, divisor, true); break;
            case FLOAT8E4M3: HostReduceNarrow.bits8(dst, a, b, count, op, divisor, false); break;
            case FLOAT8E5M2: HostReduceNarrow.bits8(dst, a, b, count, op, divisor, true); break;
            default: throw new AssertionError(type);
        }
    }

}
