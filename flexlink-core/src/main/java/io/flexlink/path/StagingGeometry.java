package io.flexlink.path;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.sync.StagingLayout;

/**
 * The PCIe path's staging area for a communicator: {@code flexlink.chunkBytes} and {@code flexlink.slots} as
 * set, or by their {@code auto} rules. A reduction's item carries a piece for every other rank in one slot
 * ({@code slot / (n - 1)} each), so with one slot size for every rank count the pieces shrink as ranks are
 * added: 1.1M at eight ranks of 8M slots. Where one thread enqueues every rank ({@code initAll}), each chunk costs it
 * one enqueue per rank, and a short call must then move in one or two large chunks ({@link EnqueueBudget})
 * that such pieces cannot hold; so {@code auto} gives such communicators 4M per rank (up to 32M) and halves the
 * slots where four would pass 256M of pinned memory. Every rank computes the same from the same values.
 */
final class StagingGeometry {
    /** A rank's piece of an {@code auto} slot where one thread enqueues every rank. */
    static final long PIECE_BYTES = 4L << 20;
    /** The largest {@code auto} slot. */
    static final long MAX_SLOT_BYTES = 32L << 20;
    /** Above this, {@code auto} gives two slots per producer instead of four. */
    static final long AUTO_AREA_BYTES = 256L << 20;

    private StagingGeometry() {
    }

    /** The staging layout of {@code ranks} ranks, {@code budget.ranksPerThread()} of them enqueued by one thread. */
    static StagingLayout layout(FlexLinkConfig config, int ranks, EnqueueBudget budget) {
        long slot = config.isAuto(FlexLinkConfig.CHUNK_BYTES) ? autoSlotBytes(budget.ranksPerThread())
                : config.chunkBytes();
        int slots = config.isAuto(FlexLinkConfig.SLOTS) ? autoSlots(ranks, slot) : config.slots();
        return new StagingLayout(ranks, slots, slot);
    }

    static long autoSlotBytes(int ranksPerThread) {
        return Math.max(FlexLinkConfig.DEFAULT_CHUNK_BYTES, Math.min(MAX_SLOT_BYTES, ranksPerThread * PIECE_BYTES));
    }

    static int autoSlots(int ranks, long slotBytes) {
        int slots = FlexLinkConfig.DEFAULT_SLOTS;
        return (long) ranks * slots * slotBytes > AUTO_AREA_BYTES ? 2 : slots;
    }
}
