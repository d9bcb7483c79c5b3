package io.flexlink.sync;

import io.flexlink.runtime.AlternatingScratch;
import io.flexlink.runtime.PinnedMemory;

/**
 * The PCIe path's channel: one rank's end of a staging area in pinned host memory shared by the ranks
 * ({@link StagingLayout}). Producer {@code p}'s item {@code i} goes through its slot {@code i % slots}:
 * the producer waits until every consumer has released the slot ({@link Flags#FREE}), copies the item in
 * (device → host, one strided copy for the pieces of several consumers) and marks it {@link Flags#FULL}
 * for each consumer; a consumer waits for FULL, copies its piece out (host → device, one strided copy
 * over consecutive producers, whose slots lie {@link StagingLayout#producerStride()} apart) and marks the
 * slot FREE again. Write once, read by all: a producer's data crosses its PCIe link once whatever the
 * number of consumers. Every operation is a stream operation, so the same code runs on CUDA (copy
 * engines, {@code cuStreamBatchMemOp}) and on the host backend.
 */
public final class Staging implements Channel {
    private final StagingLayout layout;
    private final PinnedMemory memory;
    private final int rank;
    /** Device rows a reduction's pieces are copied into (receiveRows), two sets in turn. */
    private final AlternatingScratch rows;
    /** The producers and slot of this rank's latest wait for a full slot, for the watchdog's report. */
    private volatile long lastAwaited;
    private volatile int lastAwaitedSlot;

    public Staging(StagingLayout layout, PinnedMemory memory, int rank, AlternatingScratch rows) {
        if (memory.byteSize() < layout.totalBytes()) {
            throw new IllegalArgumentException("staging memory of " + memory.byteSize() + " bytes < layout "
                    + layout.totalBytes());
        }
        this.layout = layout;
        this.memory = memory;
        this.rank = rank;
        this.rows = rows;
        memory.setAbortWord(layout.abortOffset());
    }

    public StagingLayout layout() {
        return layout;
    }

    public PinnedMemory memory() {
        return memory;
    }

    public int rank() {
        return rank;
    }

    /** Handshake words return to FREE after every item: a replayed graph finds them as at capture. */
    @Override
    public boolean capturable() {
        return true;
    }

    @Override
    public long slotBytes() {
        return layout.slotBytes();
    }

    @Override
    public long pieceBytes() {
        return layout.pieceBytes();
    }

    private int slotOf(int item) {
        return item % layout.slots();
    }

    private long slotAddress(int p, int slot) {
        return memory.deviceAddress() + layout.slotOffset(p, slot);
    }

    @Override
    public void send(Lane lane, int item, Rows src, long consumers) {
        int slot = slotOf(item);
        // the slot's last reader may have been any rank (history is not tracked): wait for every other rank
        for (int j = 0; j < layout.ranks(); j++) {
            if (j != rank) {
                lane.waitAny(memory, layout.flagOffset(rank, slot, j), Flags.FREE);
            }
        }
        if (src.shared()) {
            lane.copy(slotAddress(rank, slot), src.address(0), src.bytes(0));
        } else {
            long piece = layout.pieceBytes();
            long dst = slotAddress(rank, slot);
            int n = layout.ranks();
            for (int j = 0; j < n; ) {
                long bytes = (consumers >>> j & 1) != 0 ? src.bytes(j) : 0;
                int end = j + 1;
                while (bytes > 0 && end < n && (consumers >>> end & 1) != 0 && src.bytes(end) == bytes) {
                    end++;
                }
                // a run never holds this rank (never its own consumer): its pieces are consecutive
                lane.copyRows(dst + layout.pieceOffset(rank, j), piece, src.address(j), src.pitch(), bytes, end - j);
                j = end;
            }
        }
        for (long c = consumers; c != 0; c &= c - 1) {
            lane.write(memory, layout.flagOffset(rank, slot, Long.numberOfTrailingZeros(c)), Flags.FULL);
        }
    }

    @Override
    public void receive(Lane lane, int item, long producers, boolean pieces, Rows dst) {
        int slot = slotOf(item);
        awaitFull(lane, producers, slot);
        int n = layout.ranks();
        for (int p = 0; p < n; ) {
            long bytes = (producers >>> p & 1) != 0 ? dst.bytes(p) : 0;
            int end = p + 1;
            while (bytes > 0 && end < n && (producers >>> end & 1) != 0 && dst.bytes(end) == bytes) {
                end++;
            }
            lane.copyRowsFromHost(dst.address(p), dst.pitch(), memory,
                    layout.slotOffset(p, slot) + offset(pieces, p), layout.producerStride(), bytes, end - p);
            p = end;
        }
        release(lane, producers, slot);
    }

    @Override
    public long receiveRows(Lane lane, int item, long producers, boolean pieces, long bytes) {
        long base = receiveRowsHeld(lane, item, producers, pieces, bytes);
        releaseRows(lane, item, producers);
        return base;
    }

    /** The rows are device copies: the slots may be released any time after the copies, however late. */
    @Override
    public long receiveRowsHeld(Lane lane, int item, long producers, boolean pieces, long bytes) {
        int slot = slotOf(item);
        long pitch = rowPitch(bytes);
        long base = rows.next(Math.max(1, Long.bitCount(producers)) * pitch);
        awaitFull(lane, producers, slot);
        int n = layout.ranks();
        int row = 0;
        for (int p = 0; p < n; ) {
            if ((producers >>> p & 1) == 0) {
                p++;
                continue;
            }
            int end = p + 1;
            while (end < n && (producers >>> end & 1) != 0) {
                end++;
            }
            lane.copyRowsFromHost(base + row * pitch, pitch, memory,
                    layout.slotOffset(p, slot) + offset(pieces, p), layout.producerStride(), bytes, end - p);
            row += end - p;
            p = end;
        }
        return base;
    }

    @Override
    public void releaseRows(Lane lane, int item, long producers) {
        release(lane, producers, slotOf(item));
    }

    @Override
    public long rowPitch(long bytes) {
        return (bytes + StagingLayout.PIECE_ALIGN - 1) / StagingLayout.PIECE_ALIGN * StagingLayout.PIECE_ALIGN;
    }

    /**
     * Where this rank's data starts in producer {@code p}'s slot: its piece, or the slot's start when every
     * consumer reads the same. A run of producers never holds this rank, so the piece sits at the same
     * offset in every slot of the run (all below this rank or all above it).
     */
    private long offset(boolean pieces, int p) {
        return pieces ? layout.pieceOffset(p, rank) : 0;
    }

    private void awaitFull(Lane lane, long producers, int slot) {
        lastAwaited = producers;
        lastAwaitedSlot = slot;
        for (long p = producers; p != 0; p &= p - 1) {
            lane.waitAny(memory, layout.flagOffset(Long.numberOfTrailingZeros(p), slot, rank), Flags.FULL);
        }
    }

    /** Marks the slot read; enqueued after the copies out, so the producer may overwrite it. */
    private void release(Lane lane, long producers, int slot) {
        for (long p = producers; p != 0; p &= p - 1) {
            lane.write(memory, layout.flagOffset(Long.numberOfTrailingZeros(p), slot, rank), Flags.FREE);
        }
    }

    /**
     * Aborts the area for every rank: sets the abort word (to this rank + 1, unless a rank set it first),
     * which every rank's waits and communicators observe, then {@link #releaseAll() releases} every wait.
     * Safe from any thread; idempotent.
     */
    @Override
    public void abort() {
        long at = layout.abortOffset();
        if (memory.readCounter(at) == 0) {
            memory.writeCounter(at, rank + 1);
        }
        releaseAll();
    }

    @Override
    public int abortedBy() {
        return memory.readCounter(layout.abortOffset()) - 1;
    }

    /**
     * Writes {@link Flags#RELEASED} into every handshake word from the host, so that streams blocked in a
     * wait of either kind move on. Used when a communicator is aborted; calling it again after a late stream
     * write lowered a word releases that word again.
     */
    @Override
    public void releaseAll() {
        int n = layout.ranks();
        for (int p = 0; p < n; p++) {
            for (int s = 0; s < layout.slots(); s++) {
                for (int j = 0; j < n; j++) {
                    memory.writeCounter(layout.flagOffset(p, s, j), Flags.RELEASED);
                }
            }
        }
    }

    /**
     * The slots whose data waits for a consumer (FULL), for the watchdog's report: those consumers are
     * behind. Reads without synchronization; a report, not a decision.
     */
    @Override
    public String describeStall() {
        StringBuilder sb = new StringBuilder();
        int n = layout.ranks();
        int slot = lastAwaitedSlot;
        for (long w = lastAwaited; w != 0; w &= w - 1) {
            int p = Long.numberOfTrailingZeros(w);
            if ((memory.readCounter(layout.flagOffset(p, slot, rank)) & Flags.FULL) == 0) {
                sb.append(sb.length() == 0 ? "" : "; ").append("waiting for producer rank ").append(p)
                        .append("'s slot ").append(slot);
            }
        }
        for (int p = 0; p < n; p++) {
            for (int s = 0; s < layout.slots(); s++) {
                for (int j = 0; j < n; j++) {
                    if (memory.readCounter(layout.flagOffset(p, s, j)) == Flags.FULL) {
                        sb.append(sb.length() == 0 ? "" : "; ").append("rank ").append(j).append(" has not read rank ")
                                .append(p).append("'s slot ").append(s);
                    }
                }
            }
        }
        return sb.length() == 0 ? null : sb.toString();
    }

    @Override
    public void close() {
        rows.close();
        memory.close();
    }
}
