package io.flexlink.sync;

/**
 * Where everything lives in one staging area shared by the ranks of a communicator: for each producer
 * rank {@code p}, {@code slots} data slots of {@code slotBytes}, one "full" counter per slot, one
 * "empty" counter per slot and consumer, and one local counter; one abort word for the whole area.
 * Counters sit on separate 64-byte lines so that ranks polling different counters do not share cache
 * lines.
 */
public final class StagingLayout {
    /** Bytes between counters. */
    public static final int COUNTER_STRIDE = 64;
    /** Alignment of the data area and of every slot. */
    public static final int SLOT_ALIGN = 4096;

    private final int ranks;
    private final int slots;
    private final long slotBytes;
    private final long dataOffset;

    public StagingLayout(int ranks, int slots, long slotBytes) {
        if (ranks < 1 || slots < 2 || slotBytes < SLOT_ALIGN) {
            throw new IllegalArgumentException("staging layout: ranks=" + ranks + " slots=" + slots
                    + " slotBytes=" + slotBytes + " (need ranks >= 1, slots >= 2, slotBytes >= " + SLOT_ALIGN + ")");
        }
        this.ranks = ranks;
        this.slots = slots;
        this.slotBytes = alignUp(slotBytes, SLOT_ALIGN);
        long counters = (long) ranks * slots + (long) ranks * slots * ranks + ranks + 1;
        this.dataOffset = alignUp(counters * COUNTER_STRIDE, SLOT_ALIGN);
    }

    static long alignUp(long v, long a) {
        return (v + a - 1) / a * a;
    }

    public int ranks() {
        return ranks;
    }

    public int slots() {
        return slots;
    }

    public long slotBytes() {
        return slotBytes;
    }

    /** Offset of producer {@code p}'s full counter for slot {@code s}. */
    public long fullOffset(int p, int s) {
        return ((long) p * slots + s) * COUNTER_STRIDE;
    }

    /** Offset of the counter consumer {@code j} writes after reading producer {@code p}'s slot {@code s}. */
    public long emptyOffset(int p, int s, int j) {
        long base = (long) ranks * slots;
        return (base + ((long) p * slots + s) * ranks + j) * COUNTER_STRIDE;
    }

    /** Offset of rank {@code p}'s local counter (its consumer stream signals its producer stream). */
    public long localOffset(int p) {
        long base = (long) ranks * slots + (long) ranks * slots * ranks;
        return (base + p) * COUNTER_STRIDE;
    }

    /**
     * Offset of the abort word: 0 while the communicator is healthy, {@code r + 1} once rank {@code r}
     * aborted it ({@link Staging#abort()}). Every rank's waits observe it (the host backend cancels them;
     * on a GPU the communicator polls it), so an abort reaches the peers in other threads and processes.
     */
    public long abortOffset() {
        long base = (long) ranks * slots + (long) ranks * slots * ranks + ranks;
        return base * COUNTER_STRIDE;
    }

    /** Offset of producer {@code p}'s slot {@code s}. */
    public long slotOffset(int p, int s) {
        return dataOffset + ((long) p * slots + s) * slotBytes;
    }

    /** Total bytes of the staging area. */
    public long totalBytes() {
        return dataOffset + (long) ranks * slots * slotBytes;
    }

    /** Serialized form, exchanged so that every rank checks it maps the same layout. */
    public String describe() {
        return ranks + "x" + slots + "x" + slotBytes;
    }
}
