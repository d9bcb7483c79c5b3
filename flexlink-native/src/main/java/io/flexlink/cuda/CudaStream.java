package io.flexlink.cuda;

import io.flexlink.runtime.CaptureUser;
import java.util.ArrayList;
import java.util.List;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RowRuns;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.runtime.MemOps;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;

/**
 * A CUDA stream: non-blocking and owned when the backend created it, or a non-owning wrapper of a
 * foreign {@code cudaStream_t} ({@link CudaBackend#wrapStream}). Every operation is one asynchronous
 * CUDA call on reused raw-address wrappers and a reused kernel parameter block ({@link StreamKernels}),
 * so a steady-state enqueue allocates nothing. A stream is used by one thread at a time (as the engine
 * does).
 *
 * <p>An enqueue that CUDA rejects throws UNHANDLED_CUDA_ERROR with the CUDA error name and is kept
 * as this stream's sticky {@link #failure()} ({@link StreamStatus}).
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


    private final CudaBackend backend;
    private final int device;
    private final String label;
    private final CUstream_st handle;
    private final boolean owned;
    private final RawPointer dstPtr = new RawPointer();
    private final RawPointer srcPtr = new RawPointer();
    private final StreamStatus status;
    private final StreamKernels kernels;
    private final BatchMemOps batches;
    private final BatchCopies copies;
    private final Scratch scratch;
    /** A foreign stream first met inside a capture: its device is the caller's, not yet asked of CUDA. */
    volatile boolean deviceAssumed;

    CudaStream(CudaBackend backend, int device, String label, CUstream_st handle, boolean owned) {
        this.backend = backend;
        this.device = device;
        this.label = label;
        this.handle = handle;
        this.owned = owned;
        this.status = new StreamStatus(StreamProbe.of(handle), label, backend.queryPacing());
        this.kernels = new StreamKernels(status, backend, device, handle);
        this.batches = new BatchMemOps(status, handle);
        this.copies = new BatchCopies(status, handle, device);
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
        return status.fail(rc, what, driver);
    }

    private void checkOpen() {
        if (status.closed()) {
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
        batches.enqueue(ops);
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
        if (!BatchCopies.pitchable(dstPitch, srcPitch, width)) {
            RuntimeStream.super.copyRows(dst, dstPitch, src, srcPitch, width, rows);
            return;
        }
        int rc = cudart.cudaMemcpy2DAsync(dstPtr.set(dst), dstPitch, srcPtr.set(src), srcPitch, width, rows,
                cudart.cudaMemcpyDefault, handle);
        if (rc != 0) {
            throw fail(rc, "cudaMemcpy2DAsync", false);
        }
    }

    /** One {@code cudaMemcpy3DBatchAsync} for all the runs ({@link BatchCopies}), else each as its own copy. */
    @Override
    public void copyRowRuns(RowRuns runs) {
        if (!copyRowRunsBatched(runs)) {
            runs.enqueueEach(this);
        }
    }

    /** {@link #copyRowRuns} as one batch, if it can be one (two runs or more that a batch can express). */
    boolean copyRowRunsBatched(RowRuns runs) {
        checkOpen();
        return runs.size() >= 2 && copies.enqueue(runs);
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
        kernels.reduceRows(dst, a, rows, pitch, k, count, type, op, ranks);
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
        kernels.scale(dst, a, count, type, scalar, divisor);
    }

    @Override
    public void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
        checkOpen();
        if (count > 0) {
            kernels.reduce(dst, a, b, count, type, op, divisor);
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
        kernels.reduce(dst, a, s, count, type, op, divisor);
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

    /** While a capture begun by {@link #beginCapture} runs: whose work it holds (see {@link CudaGraph#launch}). */
    private List<CaptureUser> captureUsers;

    /** cudaStreamIsCapturing: allowed during a capture in every mode, unlike a query. */
    @Override
    public boolean isCapturing() {
        return status.isCapturing();
    }

    @Override
    public void beginCapture() {
        checkOpen();
        int rc = cudart.cudaStreamBeginCapture(handle, cudart.cudaStreamCaptureModeGlobal);
        if (rc != 0) {
            throw fail(rc, "cudaStreamBeginCapture", false);
        }
        captureUsers = new ArrayList<>();
    }

    @Override
    public void capturedBy(CaptureUser user) {
        List<CaptureUser> users = captureUsers;
        if (users != null && !users.contains(user)) {
            users.add(user);
        }
    }

    @Override
    public io.flexlink.runtime.RuntimeGraph endCapture() {
        checkOpen();
        List<CaptureUser> users = captureUsers == null ? List.of() : captureUsers;
        captureUsers = null;
        return CudaGraph.endCapture(this, users);
    }

    /** The sticky failure, after a poll of the stream when one is due ({@link StreamStatus#poll}). */
    @Override
    public FlexLinkException failure() {
        return status.failure(pacedAs());
    }

    /** One capture check per due poll, none between ({@link StreamStatus#poll}). */
    @Override
    public boolean pollForDomain() {
        return status.poll(pacedAs());
    }

    /** The device whose answers pace this stream's queries ({@link QueryPacing}; alone while only assumed). */
    private int pacedAs() {
        return deviceAssumed ? QueryPacing.ALONE : device;
    }

    /**
     * The device: a fault of finished work is sticky for the device's context, so a query of any of its streams
     * reports it (the health check then asks one stream per device instead of each, 4 µs a query). A foreign
     * stream whose device is only assumed is a domain of its own until CUDA named its device.
     */
    @Override
    public Object faultDomain() {
        return deviceAssumed ? this : device;
    }

    @Override
    public FlexLinkException knownFailure() {
        return status.firstFailure();
    }

    @Override
    public void synchronize() {
        if (status.closed()) {
            return;
        }
        int rc = cudart.cudaStreamSynchronize(handle);
        if (rc != 0) {
            throw fail(rc, "cudaStreamSynchronize", false);
        }
        FlexLinkException f = status.firstFailure();
        if (f != null) {
            throw new FlexLinkException(f.result(), "stream " + label + " failed earlier: " + f.detail(), f);
        }
    }

    @Override
    public boolean isIdle() {
        return status.isIdle();
    }

    /** Destroys an owned stream (CUDA lets its enqueued work finish first); a wrapper only forgets. Idempotent. */
    @Override
    public void close() {
        synchronized (this) { // CudaBackend.busyStreams asks under this monitor; the frees below stay outside it
            if (!status.markClosed()) {
                return;
            }
            backend.streamClosed(this);
            if (owned) {
                int rc = cudart.cudaStreamDestroy(handle);
                if (rc != 0) {
                    CudaBackend.LOG.warn("cudaStreamDestroy({}): {}", label, CudaLibraries.cudaError(rc));
                }
                handle.setNull();
            }
        }
        scratch.close();
        batches.close();
        copies.close();
        kernels.close();
    }

    @Override
    public String toString() {
        return "CudaStream[" + label + ", device " + device + (owned ? "" : ", wrapped 0x" + Long.toHexString(address())) + "]";
    }
}
