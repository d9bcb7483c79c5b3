package io.flexlink.nvshmem;

import io.flexlink.cuda.CudaStream;
import io.flexlink.cuda.Devices;
import io.flexlink.runtime.RuntimeStream;

/**
 * {@link NvshmemOps} through the shim, on CUDA streams ({@link CudaStream#address()} is the
 * {@code cudaStream_t}). Signals are set, not added, to the count the protocol expects: one use of a
 * slot is in flight at a time, so setting equals counting and a value never goes back.
 */
final class NativeNvshmemOps implements NvshmemOps {
    private static long raw(RuntimeStream s) {
        return ((CudaStream) s).address();
    }

    /**
     * NVSHMEM launches its on-stream work on the calling thread's current device. Through the CUDA
     * backend's per-thread device cache, so that it stays true for the kernel launches that follow.
     */
    @Override
    public int useDevice(int device) {
        return Devices.enter(device);
    }

    @Override
    public void restoreDevice(int previous) {
        Devices.exit(previous);
    }

    @Override
    public void putSignal(RuntimeStream stream, long dst, long src, long bytes, long signal, long value, int pe) {
        NvshmemNative.flexlink_nvshmem_putmem_signal_on_stream(dst, src, bytes, signal, value,
                NvshmemLibrary.signalSet(), pe, raw(stream));
    }

    @Override
    public void setSignal(RuntimeStream stream, long signal, long value, int pe) {
        NvshmemNative.flexlink_nvshmem_signal_op_on_stream(signal, value, NvshmemLibrary.signalSet(), pe, raw(stream));
    }

    @Override
    public void waitAtLeast(RuntimeStream stream, long signal, long value) {
        NvshmemNative.flexlink_nvshmem_signal_wait_until_on_stream(signal, NvshmemLibrary.cmpGe(), value, raw(stream));
    }

    @Override
    public void quiet(RuntimeStream stream) {
        NvshmemNative.flexlink_nvshmem_quiet_on_stream(raw(stream));
    }

    @Override
    public void barrier(RuntimeStream stream) {
        NvshmemNative.flexlink_nvshmem_barrier_all_on_stream(raw(stream));
    }
}
