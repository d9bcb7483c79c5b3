package io.flexlink.runtime;

/**
 * Pinned host memory mapped into every device's address space. Stream operations use
 * {@link #deviceAddress()}; host code reads and writes through {@link #hostAddress()}.
 * Counters are 32-bit words at 4-byte aligned offsets.
 */
public interface PinnedMemory extends AutoCloseable {
    /** The host virtual address. */
    long hostAddress();

    /** The address device work uses (the mapped view; equal to the host address under UVA). */
    long deviceAddress();

    long byteSize();

    /** The name other ranks open it by, for memory made by {@link Backend#createShared}; else null. */
    String name();

    /** Reads a counter with acquire semantics (host side). */
    int readCounter(long offset);

    /** Writes a counter with release semantics (host side). */
    void writeCounter(long offset, int value);

    /**
     * Declares the counter at {@code offset} this area's abort word: once it is non-zero, every wait on
     * this memory is cancelled where the backend can cancel a wait (the host backend fails such a wait
     * with REMOTE_ERROR). A GPU wait cannot be cancelled, so the default ignores it (the streams are
     * released by writing the counters instead, see {@code io.flexlink.sync.Staging#releaseAll}).
     */
    default void setAbortWord(long offset) {
    }

    /** Releases this mapping; idempotent. */
    @Override
    void close();
}
