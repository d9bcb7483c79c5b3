package io.flexlink.ddp.host;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.ddp.GradientCast;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.FloatFormats;

/**
 * The bf16/fp16 gradient cast of the host backend, whose device memory is host memory: the conversion runs
 * in Java on a worker thread, in stream order ({@link HostStreamTasks}). It rounds to nearest even with
 * {@link FloatFormats}, as the CUDA cast and FlexLink's reductions do, so both backends give the same bits.
 * One instance per set of buckets (it serves one communication stream); close it after the buckets.
 */
public final class HostGradientCast implements GradientCast, AutoCloseable {
    private static final int TO_WIRE = 0;
    private static final int FROM_WIRE = 1;

    private final DataType wire;
    private final HostStreamTasks tasks;

    /** A cast to {@code wireType} (BFLOAT16 or FLOAT16) for streams of {@code device} of the host backend. */
    public HostGradientCast(Backend backend, int device, DataType wireType) {
        if (backend == null || !"host".equals(backend.name())) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "backend: " + (backend == null ? "null"
                    : backend.name() + "; HostGradientCast runs on the host backend (on CUDA use "
                    + "io.flexlink.cuda.ddp.CudaGradientCast)"));
        }
        if (wireType != DataType.BFLOAT16 && wireType != DataType.FLOAT16) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "wireType: must be BFLOAT16 or FLOAT16, got " + wireType);
        }
        this.wire = wireType;
        boolean bf16 = wireType == DataType.BFLOAT16;
        this.tasks = new HostStreamTasks(backend, device, (kind, src, dst, count) -> {
            if (kind == TO_WIRE) {
                narrow(src, dst, count, bf16);
            } else {
                widen(src, dst, count, bf16);
            }
        }, "ddp-cast");
    }

    @Override
    public DataType wireType() {
        return wire;
    }

    @Override
    public void toWire(RuntimeStream stream, long src, long dst, long count) {
        tasks.enqueue(stream, TO_WIRE, src, dst, count);
    }

    @Override
    public void fromWire(RuntimeStream stream, long src, long dst, long count) {
        tasks.enqueue(stream, FROM_WIRE, src, dst, count);
    }

    private static void narrow(long src, long dst, long count, boolean bf16) {
        for (long i = 0; i < count; i++) {
            float f = UNSAFE.getFloat(src + 4 * i);
            UNSAFE.putShort(dst + 2 * i, bf16 ? FloatFormats.floatToBf16(f) : FloatFormats.floatToHalf(f));
        }
    }

    private static void widen(long src, long dst, long count, boolean bf16) {
        for (long i = 0; i < count; i++) {
            short h = UNSAFE.getShort(src + 2 * i);
            UNSAFE.putFloat(dst + 4 * i, bf16 ? FloatFormats.bf16ToFloat(h) : FloatFormats.halfToFloat(h));
        }
    }

    @Override
    public void close() {
        tasks.close();
    }
}
