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
import org.bytedeco.cuda.cudart.CUfunc_st;
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

    private static final int ARGS = 5;

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
        CUfunc_st fn = k.functions[type.ordinal()][op.ordinal()];
        long v = argValues.address();
        UNSAFE.putLong(v, dst);
        UNSAFE.putLong(v + 8, a);
        UNSAFE.putLong(v + 16, b);
        UNSAFE.putLong(v + 24, count);
        UNSAFE.putLong(v + 32, divisor); // an int parameter: the low 4 bytes (little-endian)
        // a launch goes to the current context, which must be the stream's; the real current device is read
        // (the application may have switched it since FlexLink last did) and given back afterwards, as NCCL
        // leaves the caller's device alone. Once per chunk: next to a chunk's transfer the calls cost nothing.
        int previous = Devices.enter(device);
        int rc;
        try {
            rc = cudart.cuLaunchKernel(fn, k.grid(count, type.size()), 1, 1, ReduceKernels.BLOCK, 1, 1, 0, handle,
                    argPointers, (PointerPointer<?>) null);
        } finally {
            Devices.exit(previous);
        }
        if (rc != 0) {
            throw fail(rc, "cuLaunchKernel(" + ReduceKernels.functionName(type, op) + ")", true);
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
        if (f == null && !closed && now - queriedAt >= QUERY_INTERVAL_NANOS) {
            queriedAt = now;
            int rc = cudart.cudaStreamQuery(handle);
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

    @Override
    public boolean isIdle() {
        if (closed) {
            return true;
        }
        int rc = cudart.cudaStreamQuery(handle);
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
        argPointers.close();
        argValues.close();
    }

    @Override
    public String toString() {
        return "CudaStream[" + label + ", device " + device + (owned ? "" : ", wrapped 0x" + Long.toHexString(address())) + "]";
    }
}
