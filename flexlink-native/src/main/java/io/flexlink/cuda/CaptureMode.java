package io.flexlink.cuda;

import org.bytedeco.cuda.global.cudart;

/**
 * Queries and allocations made while some thread captures a CUDA graph in global mode: CUDA forbids such
 * "potentially unsafe" calls to every thread whose capture interaction mode is not relaxed, and a forbidden
 * call invalidates the capture. FlexLink's own queries (stream and event polls from the caller, the
 * watchdog, teardown) never concern the captured streams, so they switch the calling thread to relaxed for
 * the call and back.
 */
final class CaptureMode {
    private static final ThreadLocal<int[]> MODE = ThreadLocal.withInitial(() -> new int[1]);

    private CaptureMode() {
    }

    /** Makes the thread relaxed; returns what to give to {@link #restore}. */
    static int[] relax() {
        int[] m = MODE.get();
        m[0] = cudart.cudaStreamCaptureModeRelaxed;
        cudart.cudaThreadExchangeStreamCaptureMode(m);
        return m;
    }

    /** Gives the thread back the mode {@link #relax} replaced. */
    static void restore(int[] m) {
        cudart.cudaThreadExchangeStreamCaptureMode(m);
    }
}
