package io.flexlink.runtime;

import io.flexlink.DataType;

/**
 * The primary transport's windows and one-sided calls (NCCL's ncclCommWindowRegister, ncclPutSignal, ncclSignal,
 * ncclWaitSignal), for {@code Communicator.registerWindow} and the calls on windows. Only NCCL has them
 * ({@link PrimaryComm#oneSided()} is null elsewhere). Windows are NCCL's handle values; the communicator validated
 * every argument and holds its call lock.
 */
public interface OneSided {
    /**
     * Registers the window (collective over the ranks); NCCL's handle, 0 where NCCL registered none (it answers
     * success with a NULL window where it has no symmetric memory).
     */
    long registerWindow(long address, long bytes, int flags);

    /** Deregisters (collective); nothing once the communicator was closed or aborted, which freed its windows. */
    void deregisterWindow(long window);

    /** NCCL's local buffer of the window; {@code address}, what it was registered at, where NCCL cannot say. */
    long userAddress(long window, long address);

    void putSignal(long src, long count, DataType type, int peer, long window, long offset, int signal,
                   RuntimeStream stream);

    void signal(int peer, int signal, RuntimeStream stream);

    /** Waits on {@code stream} for {@code counts[i]} operations of {@code peers[i]} on signal {@code signals[i]}. */
    void waitSignal(int[] peers, int[] signals, int[] counts, RuntimeStream stream);

    /**
     * A communicator's window call: runs under its call lock once its state allows calls, with its backend (for
     * the checks) and its one-sided calls, or null and why it has none.
     */
    interface Call<T> {
        T run(Backend backend, OneSided calls, String whyNone);
    }
}
