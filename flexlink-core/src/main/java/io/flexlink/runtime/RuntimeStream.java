package io.flexlink.runtime;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.Stream;

/**
 * A stream with the asynchronous operations the engine and the staging protocol enqueue. Every method
 * enqueues and returns; none waits on the host for device work.
 */
public interface RuntimeStream extends Stream {
    /** The stream's role, for logs and link emulation (for example {@code pcie.send}). */
    String label();

    /** Copies {@code bytes} bytes from {@code src} to {@code dst} (device or mapped pinned addresses). */
    void copy(long dst, long src, long bytes);

    /**
     * Copies {@code bytes} bytes from pinned host memory at {@code offset} of {@code mem} to {@code dst}
     * (the receiving side of a staged transfer).
     */
    default void copyFromHost(long dst, PinnedMemory mem, long offset, long bytes) {
        copy(dst, mem.deviceAddress() + offset, bytes);
    }

    /** Waits until the counter at {@code offset} of {@code mem} is at or past {@code value} (wrap-safe, ≥). */
    void waitValue32(PinnedMemory mem, long offset, int value);

    /** Writes {@code value} to the counter at {@code offset} of {@code mem}, after all earlier work of this stream. */
    void writeValue32(PinnedMemory mem, long offset, int value);

    /**
     * {@code dst[i] = a[i] op b[i]} for {@code count} elements. For {@link ReduceOp#AVG} on integers the
     * result is {@code (a + b) / divisor}; on floating-point types it divides first, so that no partial
     * sum overflows: {@code a / divisor + b / divisor}, or {@code a + b / |divisor|} for a negative
     * divisor ({@link ReduceChain} says which step uses which). The other operations ignore
     * {@code divisor}. {@code dst} may equal {@code a} or {@code b}.
     */
    void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor);

    /**
     * Like {@link #reduce}, with {@code b} in pinned host memory at {@code bOffset} of {@code mem}; a
     * backend may read it in place or copy it to device scratch first.
     */
    void reduceFromHost(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                        ReduceOp op, int divisor);

    /** The first failure of work on this stream, or null; never blocks. */
    io.flexlink.FlexLinkException failure();

    /** Records {@code event} at the current end of this stream. */
    void record(RuntimeEvent event);

    /** Makes later work of this stream wait for the most recent record of {@code event}. */
    void waitEvent(RuntimeEvent event);
}
