package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import org.bytedeco.cuda.global.cudart;

/**
 * The state of one {@link CudaStream} as FlexLink and CUDA know it: closed or not, its first failure
 * (sticky: an enqueue CUDA rejected, or a fault a query found), and what CUDA reports of its progress and
 * capture ({@link StreamProbe}). Queries never touch a stream being captured and run in relaxed capture mode, so
 * that they cannot invalidate an application's graph.
 */
final class StreamStatus {
    /**
     * Polls with cudaStreamQuery at most this often per stream, and per device once one of its streams answered
     * ({@link QueryPacing}): every collective asks (FlexLink's error check).
     */
    static final long QUERY_INTERVAL_NANOS = 1_000_000;

    private final StreamProbe probe;
    private final String label;
    private volatile FlexLinkException failure;
    private volatile boolean closed;
    private final QueryPacing pacing;
    private volatile long queriedAt;
    /**
     * Whether the last poll that was due could ask (the stream was not being captured): until the next one is due,
     * polls answer this without asking CUDA anything, the capture state included.
     */
    private volatile boolean asked = true;

    StreamStatus(StreamProbe probe, String label, QueryPacing pacing) {
        this.probe = probe;
        this.label = label;
        this.pacing = pacing;
        this.queriedAt = pacing.now() - QUERY_INTERVAL_NANOS;
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
        return !closed && probe.capturing();
    }

    /**
     * Polls the stream for faults of finished work (cudaStreamQuery, non-blocking) when {@link QueryPacing} says it is
     * due; {@code device} is the stream's, or {@link QueryPacing#ALONE}. Returns whether this stream could stand for
     * its device: false while the last due poll found it being captured, which is not asked (the query would
     * invalidate the application's graph). A poll that is not due asks nothing, not even the capture state: the
     * answer of the last one stands. A failure found is kept ({@link #firstFailure()}); a clean answer covers the
     * device's other streams for an interval, a fault does not. A stream released by a communicator's abort is not
     * failed: it ran on with garbage data and stays usable.
     */
    boolean poll(int device) {
        if (failure != null || closed) {
            return true;
        }
        long now = pacing.now();
        if (!pacing.due(device, queriedAt, now)) {
            return asked;
        }
        queriedAt = now;
        if (probe.capturing()) {
            asked = false;
            return false;
        }
        asked = true;
        int rc = probe.query();
        if (rc == 0 || rc == cudart.cudaErrorNotReady) {
            pacing.clean(device, now);
        } else {
            fail(rc, "cudaStreamQuery", false);
        }
        return true;
    }

    /** The failure kept, after {@link #poll polling} the stream. */
    FlexLinkException failure(int device) {
        poll(device);
        return failure;
    }

    /** True when all work enqueued so far has run (or the stream is closed); a fault found is kept. */
    boolean isIdle() {
        if (closed) {
            return true;
        }
        if (probe.capturing()) {
            return false; // its work is a graph's, not yet anything that runs
        }
        int rc = probe.query();
        if (rc == cudart.cudaErrorNotReady) {
            return false;
        }
        if (rc != 0) {
            fail(rc, "cudaStreamQuery", false);
        }
        return true;
    }
}
