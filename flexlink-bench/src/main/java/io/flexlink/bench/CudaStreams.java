package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.RuntimeStream;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;

/**
 * The CUDA backend's streams for the workspace: non-blocking {@code cudaStream_t}s the tool creates
 * through bytedeco (as a framework would) and hands to FlexLink through {@link CudaBackend#wrapStream},
 * so that the raw NCCL baseline enqueues on exactly the streams FlexLink uses.
 */
final class CudaStreams implements Workspace.StreamSource {
    private final CudaBackend backend;
    private final CUstream_st[] handles;

    CudaStreams(CudaBackend backend, int ranks) {
        this.backend = backend;
        this.handles = new CUstream_st[ranks];
    }

    @Override
    public RuntimeStream open(int rank, int device) {
        CUstream_st h = new CUstream_st();
        int previous = CudaDevice.enter(device);
        try {
            check(cudart.cudaStreamCreateWithFlags(h, cudart.cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags(device " + device + ")");
        } finally {
            CudaDevice.exit(previous);
        }
        handles[rank] = h;
        return backend.wrapStream(h.address(), device);
    }

    /** The {@code cudaStream_t} of local rank {@code rank}. */
    CUstream_st handle(int rank) {
        return handles[rank];
    }

    /**
     * Starts capturing local rank {@code rank}'s stream into a graph in CUDA's thread-local mode, as
     * nccl-tests captures its timed iterations: unlike the global mode of {@code RuntimeStream.beginCapture},
     * another thread's capture (-t above 1) or work (FlexLink's watchdog, NCCL's threads) is not restricted
     * by it. The capture ends with the FlexLink stream's {@code endCapture}, which works in every mode.
     */
    void beginCapture(int rank) {
        check(cudart.cudaStreamBeginCapture(handles[rank], cudart.cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture(thread-local) of rank " + rank + "'s stream");
    }

    /** Destroys the streams (their FlexLink wrappers are closed first, by the workspace). */
    @Override
    public void close() {
        for (int r = 0; r < handles.length; r++) {
            if (handles[r] != null) {
                cudart.cudaStreamDestroy(handles[r]);
                handles[r] = null;
            }
        }
    }

    static void check(int rc, String what) {
        if (rc != cudart.cudaSuccess) {
            throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, what + ": "
                    + cudart.cudaGetErrorString(rc).getString() + " (" + rc + ")");
        }
    }

    /**
     * Switching the current device for the tool's own CUDA calls, restoring it after: FlexLink caches the
     * thread's current device, and the cache stays true when the device is the same again afterwards.
     */
    static final class CudaDevice {
        private CudaDevice() {
        }

        static int enter(int device) {
            int[] current = {0};
            check(cudart.cudaGetDevice(current), "cudaGetDevice");
            if (current[0] != device) {
                check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
            }
            return current[0];
        }

        static void exit(int previous) {
            check(cudart.cudaSetDevice(previous), "cudaSetDevice(" + previous + ")");
        }
    }
}
