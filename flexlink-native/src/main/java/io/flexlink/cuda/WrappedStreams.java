package io.flexlink.cuda;

import org.bytedeco.cuda.global.cudart;

/**
 * The backend's wrappers of {@code cudaStream_t}s FlexLink does not own (a framework's, or one made with
 * bytedeco's cudart), and of each device's legacy default stream. Wrappers are cached per address, so
 * steady-state calls allocate nothing; closing one only forgets it. The device of a non-default stream is
 * asked from CUDA; a stream of another device then fails the communicator's device check.
 */
final class WrappedStreams {
    private final CudaBackend backend;
    private final LongObjectMap<CudaStream> wrapped = new LongObjectMap<>();
    private final CudaStream[] defaultStreams;

    WrappedStreams(CudaBackend backend, int devices) {
        this.backend = backend;
        this.defaultStreams = new CudaStream[devices];
    }

    /** The wrapper of {@code streamAddress} (the legacy default stream of {@code device} when 0). */
    CudaStream wrap(long streamAddress, int device) {
        if (streamAddress == 0) {
            backend.checkDevice(device);
            CudaStream s = defaultStreams[device];
            return s != null ? s : wrapDefault(device);
        }
        CudaStream s = wrapped.get(streamAddress);
        if (s != null && s.device() == device && !s.deviceAssumed) {
            return s;
        }
        return wrapForeign(streamAddress, device);
    }

    private synchronized CudaStream wrapDefault(int device) {
        CudaStream s = defaultStreams[device];
        if (s == null) {
            s = new CudaStream(backend, device, "default.d" + device, new RawStream(0), false);
            backend.streamOpened(s);
            defaultStreams[device] = s;
        }
        return s;
    }

    private synchronized CudaStream wrapForeign(long address, int device) {
        CudaStream s = wrapped.get(address);
        if (s != null && s.device() == device && !s.deviceAssumed) {
            return s;
        }
        RawStream h = new RawStream(address);
        boolean capturing = capturing(h);
        int[] actual = {device};
        // CUDA refuses cudaStreamGetDevice on a stream being captured (in global and relaxed mode alike) and
        // the refusal invalidates the user's capture, which may hold a stream's first FlexLink call: inside a
        // capture a wrapper's device stands (a mismatch fails the communicator's device check), and a new
        // wrapper takes the caller's device until the stream's first call outside a capture asks CUDA
        if (capturing) {
            if (s != null) {
                return s;
            }
        } else if (cudart.cudaStreamGetDevice(h, actual) != 0) {
            actual[0] = device; // a stream CUDA does not know: let the first enqueue report it
        }
        if (s != null && s.device() == actual[0]) {
            s.deviceAssumed = false;
            return s;
        }
        backend.checkDevice(actual[0]);
        CudaStream w = new CudaStream(backend, actual[0], "wrapped.0x" + Long.toHexString(address), h, false);
        w.deviceAssumed = capturing;
        CudaStream old = wrapped.put(address, w);
        if (old != null) {
            old.close(); // the address was reused by a stream of another device
        }
        backend.streamOpened(w);
        return w;
    }

    /** cudaStreamIsCapturing, which CUDA allows on a capturing stream (false for a stream it does not know). */
    private static boolean capturing(RawStream h) {
        int[] status = new int[1];
        return cudart.cudaStreamIsCapturing(h, status) == 0 && status[0] != cudart.cudaStreamCaptureStatusNone;
    }

    /** Forgets {@code s}'s wrapper if it is the one cached for its address. */
    void closed(CudaStream s) {
        if (!s.owned() && s.address() != 0) {
            synchronized (this) {
                if (wrapped.get(s.address()) == s) {
                    wrapped.remove(s.address());
                }
            }
        }
    }
}
