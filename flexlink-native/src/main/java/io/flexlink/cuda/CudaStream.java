package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.runtime.MemOps;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.cudart.CUstreamBatchMemOpParams_v1;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * A CUDA stream: non-blocking and owned when the backend created it, or a non-owning wrapper of a
 * foreign {@code cudaStream_t} ({@link CudaBackend#wrapStream}). Every operation is one asynchronous
 * CUDA call on reused raw-address wrappers and a reused kernel parameter block, so a steady-state
 * enqueue allocates nothing. A stream is used by one thread at a time (as the engine does).
 *
 * <p>An enqueue that CUDA rejects throws UNHANDLED_CUDA_ERROR with the CUDA error name and is kept
 * as this stream's sticky {@link #failure()}.
 */
public final class CudaStream implements RuntimeStream {
    /**
     * {@link #reduceFromHost} copies the host slot to device scratch with the copy engine first
     * (staged) at or above this many bytes, and lets the kernel read it over PCIe (fused) below.
     * Measured on an H200 (CudaMeasurements, fp32): alone, the fused consumer reads host memory faster
     * (1M chunks 43.0 vs 33.1 GB/s, 8M 50.0 vs 48.9); inside the PCIe path, where the link also carries
     * the copy engines' traffic, a 256 MB AllReduce (2 ranks on one GPU, 4 slots) took 15.3/15.1/15.1 ms
     * fused and 11.4/11.8/12.8 ms staged at 8M/4M/2M chunks: SM reads over a busy link lose to the
     * copy engine at every chunk size. So always staged; a FlexLinkConfig setting could expose it.
     */
    public static final long STAGED_MIN_BYTES = 0;
    /** The threshold in use: {@link #STAGED_MIN_BYTES}, changed only by measurements and tests. */
    static volatile long stagedMinBytes = STAGED_MIN_BYTES;

    private static final int ARGS = 8;
    /** Bytes of one {@code CUstreamBatchMemOpParams} (a union of 48 bytes in every CUDA version that has it). */
    private static final int MEMOP_BYTES = 48;
    /** cuStreamBatchMemOp takes fewer than 256 operations per call. */
    private static final int MEMOP_MAX = 255;
    /** cudaMemcpy2DAsync refuses pitches at or above this (cudaDeviceProp.memPitch on current GPUs). */
    private static final long MAX_PITCH = Integer.MAX_VALUE;

    private final CudaBackend backend;
    private final int device;
    private final String label;
    private final CUstream_st handle;
    private final boolean owned;
    private final RawPointer dstPtr = new RawPointer();
    private final RawPointer srcPtr = new RawPointer();
    /** Kernel arguments (dst, a, b, count, divisor) and the array of pointers to them that cuLaunchKernel takes. */
    private final LongPointer argValues = new LongPointer(ARGS);
    private final PointerPointer<?> argPointers = new PointerPointer<>(ARGS);
    private final Scratch scratch;
    /** The parameter array of {@link #memOps}, grown on demand (never in a steady state). */
    private CUstreamBatchMemOpParams_v1 memOpParams = new CUstreamBatchMemOpParams_v1(16);
    private int memOpCapacity = 16;
    private volatile FlexLinkException failure;
    private volatile boolean closed;

    CudaStream(CudaBackend backend, int device, String label, CUstream_st handle, boolean owned) {
        this.backend = backend;
        this.device = device;
        this.label = label;
        this.handle = handle;
        this.owned = owned;
        for (int i = 0; i < ARGS; i++) {
            UNSAFE.putLong(argPointers.address() + 8L * i, argValues.address() + 8L * i);
        }
        this.scratch = new Scratch(backend, device);
    }

    /** The {@code cudaStream_t}. */
    public CUstream_st handle() {
        return handle;
    }

    /** The raw {@code cudaStream_t} address (0 for the legacy default stream). */
    public long address() {
        return handle.address();
    }

    CudaBackend backend() {
        return backend;
    }

    boolean owned() {
        return owned;
    }

    @Override
    public int device() {
        return device;
    }

    @Override
    public String label() {
        return label;
    }

    private FlexLinkException fail(int rc, String what, boolean driver) {
        FlexLinkException e = driver ? CudaCheck.drvError(rc, what + " on stream " + label)
                : CudaCheck.rtError(rc, what + " on stream " + label);
        if (failure == null) {
            failure = e;
        }
        return e;
    }

    private void checkOpen() {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, "stream: used after close (" + label + ")");
        }
    }

    @Override
    public void copy(long dst, long src, long bytes) {
        checkOpen();
        if (bytes == 0) {
            return;
        }
        int rc = cudart.cudaMemcpyAsync(dstPtr.set(dst), srcPtr.set(src), bytes, cudart.cudaMemcpyDefault, handle);
        if (rc != 0) {
            throw fail(rc, "cudaMemcpyAsync", false);
        }
    }

    @Override
    public void waitValue32(PinnedMemory mem, long offset, int value) {
        checkOpen();
        int rc = cudart.cuStreamWaitValue32(handle, mem.deviceAddress() + offset, value, cudart.CU_STREAM_WAIT_VALUE_GEQ);
        if (rc != 0) {
            throw fail(rc, "cuStreamWaitValue32", true);
        }
    }

    @Override
    public void writeValue32(PinnedMemory mem, long offset, int value) {
        checkOpen();
        // DEFAULT: the write is ordered after all earlier work of the stream, with a memory barrier
        int rc = cudart.cuStreamWriteValue32(handle, mem.deviceAddress() + offset, value,
                cudart.CU_STREAM_WRITE_VALUE_DEFAULT);
        if (rc != 0) {
            throw fail(rc, "cuStreamWriteValue32", true);
        }
    }

    @Override
    public void waitAny(PinnedMemory mem, long offset, int mask) {
        checkOpen();
        int rc = cudart.cuStreamWaitValue32(handle, mem.deviceAddress() + offset, mask, cudart.CU_STREAM_WAIT_VALUE_AND);
        if (rc != 0) {
            throw fail(rc, "cuStreamWaitValue32(AND)", true);
        }
    }

    /** One {@code cuStreamBatchMemOp} per 255 operations; the parameter block is reused. */
    @Override
    public void memOps(MemOps ops) {
        checkOpen();
        int n = ops.size();
        for (int from = 0; from < n; from += MEMOP_MAX) {
            int k = Math.min(MEMOP_MAX, n - from);
            if (k > memOpCapacity) {
                memOpParams.close();
                memOpCapacity = Math.max(k, 2 * memOpCapacity);
                memOpParams = new CUstreamBatchMemOpParams_v1(memOpCapacity);
            }
            long base = memOpParams.address();
            UNSAFE.setMemory(base, (long) k * MEMOP_BYTES, (byte) 0);
            for (int i = 0; i < k; i++) {
                int j = from + i;
                long p = base + (long) i * MEMOP_BYTES;
                boolean wait = ops.kind(j) == MemOps.WAIT;
                // both parameter structs: operation (4 bytes, padded), address, value (union), flags, alias
                UNSAFE.putInt(p, wait ? cudart.CU_STREAM_MEM_OP_WAIT_VALUE_32 : cudart.CU_STREAM_MEM_OP_WRITE_VALUE_32);
                UNSAFE.putLong(p + 8, ops.memory(j).deviceAddress() + ops.offset(j));
                UNSAFE.putInt(p + 16, ops.value(j));
                UNSAFE.putInt(p + 24, wait ? cudart.CU_STREAM_WAIT_VALUE_AND : cudart.CU_STREAM_WRITE_VALUE_DEFAULT);
            }
            int rc = cudart.cuStreamBatchMemOp(handle, k, memOpParams, 0);
            if (rc != 0) {
                throw fail(rc, "cuStreamBatchMemOp(" + k + " operations)", true);
            }
        }
    }

    @Override
    public void copyRows(long dst, long dstPitch, long src, long srcPitch, long width, long rows) {
        checkOpen();
        if (width == 0 || rows == 0) {
            return;
        }
        if (rows == 1) {
            copy(dst, src, width);
            return;
        }
        if (dstPitch < width || srcPitch < width || dstPitch >= MAX_PITCH || srcPitch >= MAX_PITCH) {
            RuntimeStream.super.copyRows(dst, dstPitch, src, srcPitch, width, rows);
            return;
        }
        int rc = cudart.cudaMemcpy2DAsync(dstPtr.set(dst), dstPitch, srcPtr.set(src), srcPitch, width, rows,
                cudart.cudaMemcpyDefault, handle);
        if (rc != 0) {
            throw fail(rc, "cudaMemcpy2DAsync", false);
        }
    }

    @Override
    public void copyRowsFromHost(long dst, long dstPitch, PinnedMemory mem, long offset, long srcPitch, long width,
                                 long rows) {
        copyRows(dst, dstPitch, mem.deviceAddress() + offset, srcPitch, width, rows);
    }

    /** One kernel for the whole chain (reduce.cu's flexlink_rows_*), whatever the number of rows. */
    @Override
    public void reduceRows(long dst, long a, long rows, long pitch, int k, long count, DataType type, ReduceOp op,
                           int ranks) {
        checkOpen();
        if (count <= 0) {
            return;
        }
        if (k == 0) {
            if (dst != a) {
                copy(dst, a, count * type.size());
            }
            return;
        }
        ReduceKernels.Device kd = backend.kernels().forDevice(device);
        long v = argValues.address();
        UNSAFE.putLong(v, dst);
        UNSAFE.putLong(v + 8, a);
        UNSAFE.putLong(v + 16, rows);
        UNSAFE.putLong(v + 24, pitch);
        UNSAFE.putLong(v + 32, count);
        UNSAFE.putLong(v + 40, k); // int parameters: the low 4 bytes (little-endian)
        UNSAFE.putLong(v + 48, ranks);
        launchKernel(kd.rowFunctions[type.ordinal()][op.ordinal()], kd.grid(count, type.size()),
                ReduceKernels.rowsFunctionName(type, op));
    }

    @Override
    public void scale(long dst, long a, long count, DataType type, long scalar, int divisor) {
        checkOpen();
        if (count <= 0) {
            return;
        }
        if (scalar == 0 && divisor == 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "scale: a divisor of 0");
        }
        ReduceKernels.Device k = backend.kernels().forDevice(device);
        long v = argValues.address();
        UNSAFE.putLong(v, dst);
        UNSAFE.putLong(v + 8, a);
        UNSAFE.putLong(v + 16, count);
        UNSAFE.putLong(v + 24, scalar);
        UNSAFE.putLong(v + 32, divisor);
        launchKernel(k.scaleFunctions[type.ordinal()], k.grid(count, type.size()), ReduceKernels.scaleFunctionName(type));
    }

    @Override
    public void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
        checkOpen();
        if (count > 0) {
            launch(dst, a, b, count, type, op, divisor);
        }
    }

    @Override
    public void reduceFromHost(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                               ReduceOp op, int divisor) {
        if (count * type.size() >= stagedMinBytes) {
            reduceFromHostStaged(dst, a, mem, bOffset, count, type, op, divisor);
        } else {
            reduceFromHostFused(dst, a, mem, bOffset, count, type, op, divisor);
        }
    }

    /** The fused consumer: the kernel reads {@code b} from mapped host memory over PCIe. */
    public void reduceFromHostFused(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                                    ReduceOp op, int divisor) {
        reduce(dst, a, mem.deviceAddress() + bOffset, count, type, op, divisor);
    }

    /** The staged consumer: a copy-engine H2D copy into this stream's device scratch, then the kernel. */
    public void reduceFromHostStaged(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                                     ReduceOp op, int divisor) {
        checkOpen();
        if (count <= 0) {
            return;
        }
        long bytes = count * type.size();
        // stream order makes reuse safe: the next copy into scratch runs after this kernel
        long s = scratch.ensure(bytes);
        copy(s, mem.deviceAddress() + bOffset, bytes);
        launch(dst, a, s, count, type, op, divisor);
    }

    private void launch(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
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
        launchKernel(k.functions[type.ordinal()][op.ordinal()], k.grid(count, type.size()),
                ReduceKernels.functionName(type, op));
    }

    /**
     * Launches {@code fn} with the parameters in {@link #argValues}. A launch goes to the current context,
     * which must be the stream's; the real current device is read (the application may have switched it
     * since FlexLink last did) and given back afterwards, as NCCL leaves the caller's device alone.
     */
    private void launchKernel(CUfunc_st fn, int grid, String name) {
        int previous = Devices.enter(device);
        int rc;
        try {
            rc = cudart.cuLaunchKernel(fn, grid, 1, 1, ReduceKernels.BLOCK, 1, 1, 0, handle, argPointers,
                    (PointerPointer<?>) null);
        } finally {
            Devices.exit(previous);
        }
        if (rc != 0) {
            throw fail(rc, "cuLaunchKernel(" + name + ")", true);
        }
    }

    @Override
    public void record(RuntimeEvent event) {
        checkOpen();
        int rc = cudart.cudaEventRecord(((CudaEvent) event).handle(), handle);
        if (rc != 0) {
            throw fail(rc, "cudaEventRecord", false);
        }
    }

    @Override
    public void waitEvent(RuntimeEvent event) {
        checkOpen();
        int rc = cudart.cudaStreamWaitEvent(handle, ((CudaEvent) event).handle(), 0);
        if (rc != 0) {
            throw fail(rc, "cudaStreamWaitEvent", false);
        }
    }

    private final int[] captureStatus = new int[1];

    /** cudaStreamIsCapturing: allowed during a capture in every mode, unlike a query. */
    @Override
    public boolean isCapturing() {
        if (closed) {
            return false;
        }
        int rc = cudart.cudaStreamIsCapturing(handle, captureStatus);
        return rc == 0 && captureStatus[0] != cudart.cudaStreamCaptureStatusNone;
    }

    @Override
    public void beginCapture() {
        checkOpen();
        int rc = cudart.cudaStreamBeginCapture(handle, cudart.cudaStreamCaptureModeGlobal);
        if (rc != 0) {
            throw fail(rc, "cudaStreamBeginCapture", false);
        }
    }

    @Override
    public io.flexlink.runtime.RuntimeGraph endCapture() {
        checkOpen();
        return CudaGraph.endCapture(this);
    }

    /** Polls with cudaStreamQuery at most this often: every collective asks (FlexLink's error check). */
    static final long QUERY_INTERVAL_NANOS = 1_000_000;
    private volatile long queriedAt = System.nanoTime() - QUERY_INTERVAL_NANOS;

    /**
     * Also polls the stream (cudaStreamQuery, non-blocking, at most every {@link #QUERY_INTERVAL_NANOS}),
     * so that faults of finished work show up. A stream released by a communicator's abort is not failed:
     * it ran on with garbage data and stays usable.
     */
    @Override
    public FlexLinkException failure() {
        FlexLinkException f = failure;
        long now = System.nanoTime();
        if (f == null && !closed && now - queriedAt >= QUERY_INTERVAL_NANOS && !isCapturing()) {
            // a query of a stream being captured would invalidate the application's graph
            queriedAt = now;
            int rc = query();
            if (rc != 0 && rc != cudart.cudaErrorNotReady) {
                fail(rc, "cudaStreamQuery", false);
            }
        }
        return failure;
    }

    @Override
    public void synchronize() {
        if (closed) {
            return;
        }
        int rc = cudart.cudaStreamSynchronize(handle);
        if (rc != 0) {
            throw fail(rc, "cudaStreamSynchronize", false);
        }
        FlexLinkException f = failure;
        if (f != null) {
            throw new FlexLinkException(f.result(), "stream " + label + " failed earlier: " + f.detail(), f);
        }
    }

    /** cudaStreamQuery in relaxed capture mode (see {@link CaptureMode}); never of a stream being captured. */
    private int query() {
        if (isCapturing()) {
            return cudart.cudaErrorNotReady; // its work is a graph's, not yet anything that runs
        }
        int[] mode = CaptureMode.relax();
        try {
            return cudart.cudaStreamQuery(handle);
        } finally {
            CaptureMode.restore(mode);
        }
    }

    @Override
    public boolean isIdle() {
        if (closed) {
            return true;
        }
        int rc = query();
        if (rc == cudart.cudaErrorNotReady) {
            return false;
        }
        if (rc != 0) {
            fail(rc, "cudaStreamQuery", false);
        }
        return true;
    }

    /** Destroys an owned stream (CUDA lets its enqueued work finish first); a wrapper only forgets. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        backend.streamClosed(this);
        if (owned) {
            int rc = cudart.cudaStreamDestroy(handle);
            if (rc != 0) {
                CudaBackend.LOG.warn("cudaStreamDestroy({}): {}", label, CudaLibraries.cudaError(rc));
            }
            handle.setNull();
        }
        scratch.close();
        memOpParams.close();
        argPointers.close();
        argValues.close();
    }

    @Override
    public String toString() {
        return "CudaStream[" + label + ", device " + device + (owned ? "" : ", wrapped 0x" + Long.toHexString(address())) + "]";
    }
}
