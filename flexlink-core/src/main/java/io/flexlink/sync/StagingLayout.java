package io.flexlink.sync;

import io.flexlink.runtime.PinnedMemory;

/**
 * Where everything lives in one staging area shared by the ranks of a communicator: for each producer
 * {@code p}, {@code slots} data slots of {@code slotBytes}; one handshake word ({@link Flags}) per
 * (producer, slot, consumer); one abort word for the whole area. Words sit on separate 64-byte lines, so
 * that ranks polling different words do not share cache lines. A slot carries one item of a call: the
 * same data for every consumer, or one piece per consumer ({@link #pieceBytes()} each, at
 * {@link #pieceOffset}), so that one strided copy fills a slot for every consumer. A producer never sends
 * to itself, so its slots hold {@code ranks - 1} pieces, numbered without it: at two ranks a piece is the
 * whole slot, and the items of a reduction are as large as those of an AllGather.
 */
public final class StagingLayout {
    /** Bytes between words. */
    public static final int WORD_STRIDE = 64;
    /** Alignment of the data area and of every slot. */
    public static final int SLOT_ALIGN = 4096;
    /** Alignment of a consumer's piece inside a slot (vector loads, copy-engine bursts). */
    public static final int PIECE_ALIGN = 256;

    /**
     * How pieces are laid out in a slot, in the configuration digest every rank compares at creation: ranks
     * of builds that place them differently refuse to meet instead of reading each other's pieces wrongly.
     */
    public static final String FORMAT = "a piece per other rank";

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
        // every consumer's piece of a slot is at least one aligned block
        this.slotBytes = alignUp(Math.max(slotBytes, consumers(ranks) * PIECE_ALIGN), SLOT_ALIGN);
        long words = (long) ranks * slots * ranks + 1;
        this.dataOffset = alignUp(words * WORD_STRIDE, SLOT_ALIGN);
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

    /** The consumers of one producer's slot: every other rank (a one-rank area has one, for its layout). */
    private static long consumers(int ranks) {
        return Math.max(1, ranks - 1);
    }

    /** Bytes of one consumer's piece in a slot that carries a piece per consumer. */
    public long pieceBytes() {
        return slotBytes / consumers(ranks) / PIECE_ALIGN * PIECE_ALIGN;
    }

    /**
     * Offset inside producer {@code p}'s slot of consumer {@code j}'s piece: piece {@code j} below the
     * producer, {@code j - 1} above it. Consecutive consumers on one side of the producer stay consecutive
     * pieces, and consecutive producers on one side of the consumer put its piece at the same offset, so the
     * strided copies of both ends stay one per side, as they were.
     */
    public long pieceOffset(int p, int j) {
        return (j > p ? j - 1 : j) * pieceBytes();
    }

    /** Offset of the handshake word of producer {@code p}'s slot {@code s} for consumer {@code j}. */
    public long flagOffset(int p, int s, int j) {
        return (((long) p * slots + s) * ranks + j) * WORD_STRIDE;
    }

    /**
     * Offset of the abort word: 0 while the communicator is healthy, {@code r + 1} once rank {@code r}
     * aborted it ({@link Staging#abort()}). Every rank's waits observe it (the host backend cancels them;
     * on a GPU the communicator polls it), so an abort reaches the peers in other threads and processes.
     */
    public long abortOffset() {
        return (long) ranks * slots * ranks * WORD_STRIDE;
    }

    /** Offset of producer {@code p}'s slot {@code s}. */
    public long slotOffset(int p, int s) {
        return dataOffset + ((long) p * slots + s) * slotBytes;
    }

    /** Bytes from one producer's slot {@code s} to the next producer's slot {@code s}. */
    public long producerStride() {
        return (long) slots * slotBytes;
    }

    /** Total bytes of the staging area. */
    public long totalBytes() {
        return dataOffset + (long) ranks * slots * slotBytes;
    }

    /** Puts every handshake word in its first state ({@link Flags#FREE}); the creator does it before any rank maps the area. */
    public void initialize(PinnedMemory memory) {
        for (int p = 0; p < ranks; p++) {
            for (int s = 0; s < slots; s++) {
                for (int j = 0; j < ranks; j++) {
                    memory.writeCounter(flagOffset(p, s, j), Flags.FREE);
                }
            }
        }
    }
}
