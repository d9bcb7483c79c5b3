package io.flexlink.cuda.ddp;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.CudaModule;
import io.flexlink.cuda.KernelCompiler;
import io.flexlink.ddp.GradientCast;
import io.flexlink.runtime.RuntimeStream;

/**
 * The bf16/fp16 gradient cast of the CUDA backend: grid-stride kernels of {@code cast.cu}, compiled by
 * NVRTC for the device (cached on disk like FlexLink's reduction kernels). The conversions are those of
 * {@code reduce.cu} and of the host backend's {@code FloatFormats} (round to nearest even), so a bucket
 * carries the same bits on both backends. One instance per set of buckets (one thread enqueues at a time);
 * close it after the buckets.
 */
public final class CudaGradientCast implements GradientCast, AutoCloseable {
    static final String RESOURCE = "/io/flexlink/cuda/ddp/cast.cu";
    private static final int THREADS = 256;
    private static final int MAX_BLOCKS = 4096;

    private final DataType wire;
    private final CudaModule module;
    private final StreamKernel narrow;
    private final StreamKernel widen;

    /** Compiles (or takes from the cache) the cast to {@code wireType} (BFLOAT16 or FLOAT16) for {@code device}. */
    public CudaGradientCast(KernelCompiler compiler, int device, DataType wireType) {
        String suffix;
        if (wireType == DataType.BFLOAT16) {
            suffix = "bf16";
        } else if (wireType == DataType.FLOAT16) {
            suffix = "f16";
        } else {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "wireType: must be BFLOAT16 or FLOAT16, got " + wireType);
        }
        this.wire = wireType;
        String source = StreamKernel.source(CudaGradientCast.class, RESOURCE);
        this.module = StreamKernel.load(compiler, device, RESOURCE, source);
        StreamKernel n = null;
        try {
            n = new StreamKernel(module, "flexlink_cast_f32_to_" + suffix, 3);
            this.narrow = n;
            this.widen = new StreamKernel(module, "flexlink_cast_" + suffix + "_to_f32", 3);
        } catch (RuntimeException e) {
            if (n != null) {
                n.close();
            }
            module.close();
            throw e;
        }
    }

    @Override
    public DataType wireType() {
        return wire;
    }

    @Override
    public void toWire(RuntimeStream stream, long src, long dst, long count) {
        launch(narrow, stream, src, dst, count);
    }

    @Override
    public void fromWire(RuntimeStream stream, long src, long dst, long count) {
        launch(widen, stream, src, dst, count);
    }

    private static void launch(StreamKernel k, RuntimeStream stream, long src, long dst, long count) {
        if (count <= 0) {
            return;
        }
        k.arg(0, src).arg(1, dst).arg(2, count).launch(stream, StreamKernel.blocks(count, THREADS, MAX_BLOCKS), 1,
                THREADS, 1);
    }

    @Override
    public void close() {
        narrow.close();
        widen.close();
        module.close();
    }
}
