package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.IntPointer;

/**
 * The state of one {@link CudaStream} as FlexLink and CUDA know it: closed or not, its first failure
 * (sticky: an enqueue CUDA rejected, or a fault a query found), and what CUDA reports of its progress and
 * capture. Queries never touch a stream being captured and run in relaxed capture mode, so that they
 * cannot invalidate an application's graph.
 */
final class StreamStatus {
    /** Polls with cudaStreamQuery at most this often: every collective asks (FlexLink's error check). */
    static final long QUERY_INTERVAL_NANOS = 1_000_000;

    private final CUstream_st handle;
    private final String label;
    /**
     * Native, not an {@code int[]}: every call asks (the watchdog's guard), and JNI copies an array in and
     * out of the C heap per call. Freed with this object by JavaCPP's deallocator: the watchdog's thread may
     * still ask after the stream closed (it then gets false without touching it).
     */
    private final IntPointer captureStatus = new IntPointer(1L);
    private volatile FlexLinkException failure;
    private volatile boolean closed;
    private volatile long queriedAt = System.nanoTime() - QUERY_INTERVAL_NANOS;

    StreamStatus(CUstream_st handle, String label) {
        this.handle = handle;
        this.label = label;
    }

    boolean closed() {
        return closed;
    }

    /** True the first time only: the caller then releases the stream (used from one thread, as the stream). */
    boolean markClosed() {
        if (closed) {
            return false;
        }
        closed = true;
        return true;
    }

    /** The exception for a rejected CUDA call on this stream, kept as the stream's failure if it is the first. */
    FlexLinkException fail(int rc, String what, boolean driver) {
        FlexLinkException e = driver ? CudaCheck.drvError(rc, what + " on stream " + label)
                : CudaCheck.rtError(rc, what + " on stream " + label);
        if (failure == null) {
            failure = e;
        }
        return e;
    }

    /** The failure kept so far, without asking CUDA. */
    FlexLinkException firstFailure() {
        return failure;
    }

    /** cudaStreamIsCapturing: allowed during a capture in every mode, unlike a query. */
    boolean isCapturing() {
        if (closed) {
            return false;
        }
        int rc = cudart.cudaStreamIsCapturing(handle, captureStatus);
        return rc == 0 && captureStatus.get() != cudart.cudaStreamCaptureStatusNone;
    }

    /**
     * The failure kept, after polling the stream (cudaStreamQuery, non-blocking, at most every {@link #QUERY_INTERVAL_NANOS}),
     * so that faults of finished work show up. A stream released by a communicator's abort is not failed:
     * it ran on with garbage data and stays usable.
     */
    FlexLinkException failure() {
        FlexLinkException f = failure;
        long now = System.nanoTime();
        if (f == null && !closed && now - queriedAt >= QUERY_INTERVAL_NANOS) {
            // query() asks the capture state first: a query of a stream being captured would invalidate the
            // application's graph, so such a stream answers "not ready" without one
            queriedAt = now;
            int rc = query();
            if (rc != 0 && rc != cudart.cudaErrorNotReady) {
                fail(rc, "cudaStreamQuery", false);
            }
        }
        return failure;
    }

    /** True when all work enqueued so far has run (or the stream is closed); a fault found is kept. */
    boolean isIdle() {
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
}
