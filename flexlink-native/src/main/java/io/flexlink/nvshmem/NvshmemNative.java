package io.flexlink.nvshmem;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * The JNI face of {@code flexlink_nvshmem.h} (flexlink-native/src/main/cpp): the javacpp Maven plugin
 * generates and compiles {@code libjniNvshmemNative.so} from this class at build time, and packages it
 * under {@code io/flexlink/nvshmem/linux-x86_64/}. The JNI library needs only libc and libdl; NVSHMEM
 * itself is opened later, at run time, by {@link #flexlink_nvshmem_open}.
 *
 * <p>Use it only through {@link NvshmemLibrary}, which loads this class safely (a failed load is a
 * reason, never a crash) and keeps the process-wide state. Addresses and streams are raw 64-bit values
 * ({@code void *}, {@code cudaStream_t}). NVSHMEM is initialized thread-serialized: calls must not overlap.
 */
@Platform(value = "linux-x86_64", include = "flexlink_nvshmem.h")
final class NvshmemNative {
    private NvshmemNative() {
    }

    /** Loads the JNI library; throws {@link UnsatisfiedLinkError} (or another LinkageError) where it cannot. */
    static void load() {
        Loader.load(NvshmemNative.class);
    }

    static native String flexlink_nvshmem_error();

    static native int flexlink_nvshmem_loaded();

    static native int flexlink_nvshmem_open(String path);

    static native int flexlink_nvshmem_version();

    static native int flexlink_nvshmem_uniqueid_bytes();

    static native int flexlink_nvshmem_get_uniqueid(byte[] out);

    static native int flexlink_nvshmem_init(byte[] uid, int rank, int nranks);

    static native int flexlink_nvshmem_init_status();

    static native int flexlink_nvshmem_my_pe();

    static native int flexlink_nvshmem_n_pes();

    static native long flexlink_nvshmem_malloc(long bytes);

    static native void flexlink_nvshmem_free(long address);

    static native void flexlink_nvshmem_putmem_signal_on_stream(long dst, long src, long bytes, long signal,
                                                                long value, int op, int pe, long stream);

    static native void flexlink_nvshmem_signal_op_on_stream(long signal, long value, int op, int pe, long stream);

    static native void flexlink_nvshmem_signal_wait_until_on_stream(long signal, int cmp, long value, long stream);

    static native void flexlink_nvshmem_quiet_on_stream(long stream);

    static native void flexlink_nvshmem_barrier_all_on_stream(long stream);

    static native void flexlink_nvshmem_finalize();

    static native int flexlink_nvshmem_signal_set();

    static native int flexlink_nvshmem_signal_add();

    static native int flexlink_nvshmem_cmp_ge();
}
