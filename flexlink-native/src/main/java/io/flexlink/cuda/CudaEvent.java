package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RuntimeEvent;
import org.bytedeco.cuda.cudart.CUevent_st;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A {@code cudaEvent_t} (timing disabled unless asked for); {@link #close()} destroys it once. */
final class CudaEvent implements RuntimeEvent {
    private static final Logger LOG = LoggerFactory.getLogger(CudaEvent.class);

    private final CUevent_st handle;
    private final int device;
    private final boolean timing;
    private final float[] millis = new float[1];
    private volatile boolean closed;

    private CudaEvent(CUevent_st handle, int device, boolean timing) {
        this.handle = handle;
        this.device = device;
        this.timing = timing;
    }

    static CudaEvent create(int device, boolean timing) {
        CUevent_st e = new CUevent_st();
        int previous = Devices.enter(device);
        try {
            CudaCheck.rt(cudart.cudaEventCreateWithFlags(e, timing ? cudart.cudaEventDefault : cudart.cudaEventDisableTiming),
                    "cudaEventCreateWithFlags(device " + device + ")");
        } finally {
            Devices.exit(previous);
        }
        return new CudaEvent(e, device, timing);
    }

    CUevent_st handle() {
        return handle;
    }

    int device() {
        return device;
    }

    @Override
    public boolean isComplete() {
        int[] mode = CaptureMode.relax();
        int rc;
        try {
            rc = cudart.cudaEventQuery(handle);
        } finally {
            CaptureMode.restore(mode);
        }
        if (rc == cudart.cudaErrorNotReady) {
            return false;
        }
        CudaCheck.rt(rc, "cudaEventQuery");
        return true;
    }

    @Override
    public void synchronize() {
        CudaCheck.rt(cudart.cudaEventSynchronize(handle), "cudaEventSynchronize");
    }

    @Override
    public float elapsedMillis(RuntimeEvent start) {
        CudaEvent s = (CudaEvent) start;
        if (!timing || !s.timing) {
            throw new FlexLinkException(Result.INVALID_USAGE, "event: elapsed time needs two timing events");
        }
        int rc = cudart.cudaEventElapsedTime(millis, s.handle, handle);
        if (rc == cudart.cudaErrorNotReady) {
            throw new FlexLinkException(Result.IN_PROGRESS, "event: not complete yet");
        }
        CudaCheck.rt(rc, "cudaEventElapsedTime");
        return millis[0];
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        int rc = cudart.cudaEventDestroy(handle);
        if (rc != 0) {
            LOG.warn("cudaEventDestroy: {}", CudaLibraries.cudaError(rc));
        }
        handle.setNull();
    }
}
