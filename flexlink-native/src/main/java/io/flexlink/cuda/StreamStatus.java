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
    /** When this stream was last queried (the STALE rule of {@link QueryPacing} counts from it). */
    private volatile long queriedAt;
    /**
     * Whether the last due poll could ask (the stream was not being captured), and when it found a capture: until the
     * next due poll, and for an interval after a capture was found, polls answer from these without asking CUDA
     * anything. Two volatiles read without a lock: a poll racing another may answer from the previous poll, which
     * only changes which stream stands for the device this once.
     */
    private volatile boolean lastDuePollAsked = true;
    private volatile long captureFoundAt;

    StreamStatus(StreamProbe probe, String label, QueryPacing pacing) {
        this.probe = probe;
        this.label = label;
        this.pacing = pacing;
        this.queriedAt = pacing.now() - pacing.interval();
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
     * due; {@code device} is the stream's, or {@link QueryPacing#ALONE}. Returns whether this stream stood for its
     * device ({@link io.flexlink.runtime.RuntimeStream#pollForDomain()}): false for a closed stream, and false while
     * the last due poll found it being captured (not asked: the query would invalidate the application's graph), for
     * at least an interval, without a capture check. A poll that is not due asks nothing, not even the capture state:
     * the last due poll's answer stands. A capture found does not count as a query, so a stream's own fault is still
     * asked for within {@link QueryPacing#STALE} intervals of its last real query. A failure found is kept
     * ({@link #firstFailure()}); a clean answer covers the device's other streams for an interval, a fault does not.
     * A stream released by a communicator's abort is not failed: it ran on with garbage data and stays usable.
     */
    boolean poll(int device) {
        if (closed) {
            return false;
        }
        if (failure != null) {
            return true;
        }
        long now = pacing.now();
        if (!lastDuePollAsked && now - captureFoundAt < pacing.interval()) {
            return false;
        }
        if (!pacing.due(device, queriedAt, now)) {
            return lastDuePollAsked;
        }
        if (probe.capturing()) {
            captureFoundAt = now;
            lastDuePollAsked = false;
            return false;
        }
        queriedAt = now;
        lastDuePollAsked = true;
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
