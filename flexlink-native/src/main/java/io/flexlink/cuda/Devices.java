package io.flexlink.cuda;

import org.bytedeco.cuda.global.cudart;

/**
 * The calling thread's current CUDA device, cached so that hot paths call {@code cudaSetDevice} only
 * when the device really changes. The cache can go stale when code outside FlexLink calls
 * {@code cudaSetDevice} on the same thread; {@link #refresh()} re-reads it (the NCCL facade does so on
 * entry, and init paths use {@link #enter}/{@link #exit}, which read the real device first). Code of other
 * packages that must switch devices (the NVSHMEM path) goes through {@link #enter}/{@link #exit} too, never
 * {@code cudaSetDevice} itself, so that the cache stays true.
 */
public final class Devices {
    /** [0] = the current device as last set or read, -1 when unknown. */
    private static final ThreadLocal<int[]> CURRENT = ThreadLocal.withInitial(() -> new int[] {-1});

    private Devices() {
    }

    /** Makes {@code device} current if the cache says it is not. */
    static void use(int device) {
        int[] c = CURRENT.get();
        if (c[0] != device) {
            CudaCheck.rt(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
            c[0] = device;
        }
    }

    /** Reads the real current device into the cache and returns it. */
    static int refresh() {
        int[] c = CURRENT.get();
        int rc = cudart.cudaGetDevice(c);
        if (rc != 0) {
            c[0] = -1;
            throw CudaCheck.rtError(rc, "cudaGetDevice");
        }
        return c[0];
    }

    /** The cached current device (reading it if unknown). */
    static int current() {
        int[] c = CURRENT.get();
        return c[0] >= 0 ? c[0] : refresh();
    }

    /** Makes {@code device} current for an init-path call; returns the device to restore with {@link #exit}. */
    public static int enter(int device) {
        int previous = refresh();
        use(device);
        return previous;
    }

    /** Restores the device {@link #enter} returned. */
    public static void exit(int previous) {
        if (previous >= 0) {
            use(previous);
        }
    }
}
