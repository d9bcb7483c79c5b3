package io.flexlink.runtime;

import java.util.Arrays;

/**
 * A batch of 32-bit flag waits and writes on pinned memory, enqueued as one stream operation
 * ({@link RuntimeStream#memOps}; {@code cuStreamBatchMemOp} on CUDA, where a batch of 16 costs about
 * twice a single operation's host time instead of sixteen times). The operations take effect in batch
 * order. A wait holds the stream until {@code (word & mask) != 0}, so that one word can carry two
 * states whose waiters never confuse them (see {@code io.flexlink.sync.Flags}). Reused call after call:
 * {@link #clear} keeps the arrays, so a steady state allocates nothing.
 */
public final class MemOps {
    /** Kinds of operation. */
    public static final byte WAIT = 1;
    public static final byte WRITE = 2;
    /** A wait until a counter reaches a value ({@link RuntimeStream#waitValue32}'s, wrap-safe). */
    public static final byte WAIT_AT_LEAST = 3;

    private byte[] kinds = new byte[16];
    private PinnedMemory[] memories = new PinnedMemory[16];
    private long[] offsets = new long[16];
    private int[] values = new int[16];
    private int size;

    /** Appends a wait until {@code (word & mask) != 0} on the word at {@code offset} of {@code mem}. */
    public MemOps waitAny(PinnedMemory mem, long offset, int mask) {
        return add(WAIT, mem, offset, mask);
    }

    /**
     * Appends a wait until the counter at {@code offset} of {@code mem} reaches {@code value} (as
     * {@link RuntimeStream#waitValue32}: {@code (int) (word - value) >= 0}).
     */
    public MemOps waitAtLeast(PinnedMemory mem, long offset, int value) {
        return add(WAIT_AT_LEAST, mem, offset, value);
    }

    /** Appends a write of {@code value} to the word at {@code offset} of {@code mem}, after all earlier work. */
    public MemOps write(PinnedMemory mem, long offset, int value) {
        return add(WRITE, mem, offset, value);
    }

    private MemOps add(byte kind, PinnedMemory mem, long offset, int value) {
        if (size == kinds.length) {
            int n = size * 2;
            kinds = Arrays.copyOf(kinds, n);
            memories = Arrays.copyOf(memories, n);
            offsets = Arrays.copyOf(offsets, n);
            values = Arrays.copyOf(values, n);
        }
        kinds[size] = kind;
        memories[size] = mem;
        offsets[size] = offset;
        values[size] = value;
        size++;
        return this;
    }

    /** Forgets every operation (and the memories they named). */
    public void clear() {
        Arrays.fill(memories, 0, size, null);
        size = 0;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public byte kind(int i) {
        return kinds[i];
    }

    public PinnedMemory memory(int i) {
        return memories[i];
    }

    public long offset(int i) {
        return offsets[i];
    }

    /** The mask of a wait, the value of a write or of a wait until a counter reaches it. */
    public int value(int i) {
        return values[i];
    }
}
