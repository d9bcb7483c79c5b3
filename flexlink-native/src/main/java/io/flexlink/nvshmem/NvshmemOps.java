package io.flexlink.nvshmem;

import io.flexlink.runtime.RuntimeStream;

/**
 * The NVSHMEM operations the path enqueues, on a stream of the path. {@link NativeNvshmemOps} calls the
 * shim; the tests also run the path's protocol over an emulation on the host backend. Addresses are
 * local symmetric addresses; {@code pe} names the PE whose copy of the object is meant.
 */
interface NvshmemOps {
    /** Makes {@code device} the calling thread's current device; returns the previous one (-1: unknown). */
    int useDevice(int device);

    /** Makes {@code previous}, as {@link #useDevice} returned it, current again (-1: nothing to restore). */
    void restoreDevice(int previous);

    /** nvshmemx_putmem_signal_on_stream: the data, then {@code signal = value} (NVSHMEM_SIGNAL_SET) on {@code pe}. */
    void putSignal(RuntimeStream stream, long dst, long src, long bytes, long signal, long value, int pe);

    /** nvshmemx_signal_op_on_stream with NVSHMEM_SIGNAL_SET. */
    void setSignal(RuntimeStream stream, long signal, long value, int pe);

    /** nvshmemx_signal_wait_until_on_stream with NVSHMEM_CMP_GE. */
    void waitAtLeast(RuntimeStream stream, long signal, long value);

    /** nvshmemx_quiet_on_stream: every put issued so far is complete (its source may be reused). */
    void quiet(RuntimeStream stream);

    /** nvshmemx_barrier_all_on_stream. */
    void barrier(RuntimeStream stream);
}
