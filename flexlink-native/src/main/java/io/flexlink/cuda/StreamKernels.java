package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * The reduction kernels' launches on one {@link CudaStream} (reduce.cu's elementwise, row-chain and scale
 * functions). The parameters are written into a parameter block allocated once with the stream, whose
 * array of pointers to them is filled once too, so a launch allocates nothing. The stream checks that it
 * is open and skips empty work before calling here; a rejected launch becomes the stream's failure
 * ({@link StreamStatus}).
 */
final class StreamKernels implements AutoCloseable {
    private static final int ARGS = 8;

    private final StreamStatus status;
    private final CudaBackend backend;
    private final int device;
    private final CUstream_st handle;
    /** Kernel arguments (dst, a, b, count, divisor) and the array of pointers to them that cuLaunchKernel takes. */
    private final LongPointer argValues = new LongPointer(ARGS);
    private final PointerPointer<?> argPointers = new PointerPointer<>(ARGS);

    StreamKernels(StreamStatus status, CudaBackend backend, int device, CUstream_st handle) {
        this.status = status;
        this.backend = backend;
        this.device = device;
        this.handle = handle;
        for (int i = 0; i < ARGS; i++) {
            UNSAFE.putLong(argPointers.address() + 8L * i, argValues.address() + 8L * i);
        }
    }

    /** One kernel for the whole chain of {@code k} rows (reduce.cu's flexlink_rows_*); {@code k >= 1}. */
    void reduceRows(long dst, long a, long rows, long pitch, int k, long count, DataType type, ReduceOp op,
                    int ranks) {
        ReduceKernels.Device kd = backend.kernels().forDevice(device);
        long v = argValues.address();
        UNSAFE.putLong(v, dst);
        UNSAFE.putLong(v + 8, a);
        UNSAFE.putLong(v + 16, rows);
        UNSAFE.putLong(v + 24, pitch);
        UNSAFE.putLong(v + 32, count);
        UNSAFE.putLong(v + 40, k); // int parameters: the low 4 bytes (little-endian)
        UNSAFE.putLong(v + 48, ranks);
        launchKernel(kd.rowFunctions[type.ordinal()][op.ordinal()], kd.grid(count, type.size()), ReduceKernels.ROWS,
                type, op);
    }

    /** {@code dst = a * *scalar}, or {@code a / divisor} when {@code scalar} is 0 (then never a 0 divisor). */
    void scale(long dst, long a, long count, DataType type, long scalar, int divisor) {
        ReduceKernels.Device k = backend.kernels().forDevice(device);
        long v = argValues.address();
        UNSAFE.putLong(v, dst);
        UNSAFE.putLong(v + 8, a);
        UNSAFE.putLong(v + 16, count);
        UNSAFE.putLong(v + 24, scalar);
        UNSAFE.putLong(v + 32, divisor);
        launchKernel(k.scaleFunctions[type.ordinal()], k.grid(count, type.size()), ReduceKernels.SCALE, type, null);
    }

    /** {@code dst = a op b} elementwise, {@code count > 0}; an AVG's divisor is checked first. */
    void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
        if (op == ReduceOp.AVG && (divisor == 0 || divisor < 0 && !type.isFloatingPoint())) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "reduce: AVG divisor must be >= 1"
                    + (type.isFloatingPoint() ? " or <= -1" : "") + " for " + type + ", got " + divisor);
        }
        ReduceKernels.Device k = backend.kernels().forDevice(device);
        long v = argValues.address();
        UNSAFE.putLong(v, dst);
        UNSAFE.putLong(v + 8, a);
        UNSAFE.putLong(v + 16, b);
        UNSAFE.putLong(v + 24, count);
        UNSAFE.putLong(v + 32, divisor); // an int parameter: the low 4 bytes (little-endian)
        launchKernel(k.functions[type.ordinal()][op.ordinal()], k.grid(count, type.size()), ReduceKernels.REDUCE,
                type, op);
    }

    /**
     * Launches {@code fn} with the parameters in {@link #argValues}. A launch goes to the current context,
     * which must be the stream's; the real current device is read (the application may have switched it
     * since FlexLink last did) and given back afterwards, as NCCL leaves the caller's device alone.
     */
    private void launchKernel(CUfunc_st fn, int grid, String kind, DataType type, ReduceOp op) {
        int previous = Devices.enter(device);
        int rc;
        try {
            rc = cudart.cuLaunchKernel(fn, grid, 1, 1, ReduceKernels.BLOCK, 1, 1, 0, handle, argPointers,
                    (PointerPointer<?>) null);
        } finally {
            Devices.exit(previous);
        }
        if (rc != 0) {
            // the name is built only here: a launch that works allocates nothing
            throw status.fail(rc, "cuLaunchKernel(" + ReduceKernels.functionName(kind, type, op) + ")", true);
        }
    }

    /** Frees the parameter block (the pointer array first, as it points into the values). */
    @Override
    public void close() {
        argPointers.close();
        argValues.close();
    }
}
