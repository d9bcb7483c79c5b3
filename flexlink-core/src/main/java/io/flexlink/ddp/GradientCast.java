package io.flexlink.ddp;

import io.flexlink.DataType;
import io.flexlink.runtime.RuntimeStream;

/**
 * A communication hook that carries FLOAT32 gradients in a narrower type: each bucket's gradients are cast
 * to {@link #wireType()} into the bucket's buffer, all-reduced in that type, and cast back into the
 * gradients (PyTorch DDP's {@code bf16_compress_hook}). Half the bytes on every path, at the cost of
 * rounding each gradient and each partial sum to the narrow type.
 *
 * <p>Both methods enqueue on {@code stream} (the buckets' communication stream) and return without
 * waiting. Implementations: {@code io.flexlink.ddp.host.HostGradientCast} (host backend) and
 * {@code io.flexlink.cuda.ddp.CudaGradientCast} (NVRTC kernels, flexlink-native). Both round to nearest
 * even exactly as FlexLink's reductions do, so the two backends give the same bits.
 */
public interface GradientCast {
    /** The type the AllReduce carries: {@link DataType#BFLOAT16} or {@link DataType#FLOAT16}. */
    DataType wireType();

    /** Enqueues {@code dst[i] = (wireType) src[i]} for {@code count} FLOAT32 elements at {@code src}. */
    void toWire(RuntimeStream stream, long src, long dst, long count);

    /** Enqueues {@code dst[i] = (float) src[i]} for {@code count} wire-type elements at {@code src}. */
    void fromWire(RuntimeStream stream, long src, long dst, long count);
}
