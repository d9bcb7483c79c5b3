package io.flexlink.cuda;

import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.IntPointer;

/**
 * The two questions {@link StreamStatus} asks CUDA about its stream: whether it is being captured, and whether its
 * work has run (and faulted). Behind an interface so that the status's pacing of them is one piece of code whatever
 * answers; {@link #of} asks CUDA.
 */
interface StreamProbe {
    /** {@code cudaStreamIsCapturing}: allowed during a capture in every mode, unlike a query. */
    boolean capturing();

    /**
     * {@code cudaStreamQuery} in relaxed capture mode ({@link CaptureMode}): 0, {@code cudaErrorNotReady} or the
     * fault. Never asked of a stream being captured: the query would invalidate the application's graph.
     */
    int query();

    /** The probe of a CUDA stream. */
    static StreamProbe of(CUstream_st handle) {
        return new StreamProbe() {
            /**
             * Native, not an {@code int[]}: every split call asks of its caller's stream, and JNI copies an array in
             * and out of the C heap per call. Freed with the probe by JavaCPP's deallocator: the watchdog's thread may
             * still ask after the stream closed (its status then answers without asking). Two threads asking at once
             * may read each other's answer, as before this probe existed.
             */
            private final IntPointer captureStatus = new IntPointer(1L);

            @Override
            public boolean capturing() {
                int rc = cudart.cudaStreamIsCapturing(handle, captureStatus);
                return rc == 0 && captureStatus.get() != cudart.cudaStreamCaptureStatusNone;
            }

            @Override
            public int query() {
                int[] mode = CaptureMode.relax();
                try {
                    return cudart.cudaStreamQuery(handle);
                } finally {
                    CaptureMode.restore(mode);
                }
            }
        };
    }
}
