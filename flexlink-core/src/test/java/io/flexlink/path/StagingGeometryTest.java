package io.flexlink.path;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.sync.StagingLayout;
import org.junit.jupiter.api.Test;

/** The PCIe path's staging area: {@code auto} by how many ranks one thread enqueues, explicit settings as set. */
class StagingGeometryTest {
    private static final long MIB = 1L << 20;
    private static final FlexLinkConfig AUTO = FlexLinkConfig.builder().build();

    private static StagingLayout auto(int ranks, int perThread) {
        return StagingGeometry.layout(AUTO, ranks, new EnqueueBudget(perThread));
    }

    @Test
    void ranksDrivenByOneThreadGetFourMibPerRankAndTwoSlotsPast256Mib() {
        StagingLayout eight = auto(8, 8);
        assertEquals(32 * MIB, eight.slotBytes());
        assertEquals(32 * MIB / 7 / 256 * 256, eight.pieceBytes(), "a seventh of the slot (for every other rank) holds "
                + "a 3.2 MiB segment");
        assertEquals(2, eight.slots(), "4 slots would pin 1 GiB");
        StagingLayout four = auto(4, 4);
        assertEquals(16 * MIB, four.slotBytes());
        assertEquals(4, four.slots(), "4 x 4 x 16 MiB is 256 MiB");
        assertEquals(8 * MIB, auto(2, 2).slotBytes(), "never below the one-thread-per-rank size");
        assertEquals(32 * MIB, auto(16, 16).slotBytes(), "at most 32 MiB");
    }

    @Test
    void ranksWithAThreadEachKeepEightMibSlotsAndFourSlots() {
        StagingLayout eight = auto(8, 1);
        assertEquals(8 * MIB, eight.slotBytes());
        assertEquals(4, eight.slots());
        assertEquals(2, auto(16, 1).slots(), "16 x 4 x 8 MiB would pass 256 MiB");
    }

    @Test
    void explicitSettingsAreKept() {
        FlexLinkConfig both = FlexLinkConfig.builder().set(FlexLinkConfig.CHUNK_BYTES, "2M")
                .set(FlexLinkConfig.SLOTS, "6").build();
        StagingLayout l = StagingGeometry.layout(both, 8, new EnqueueBudget(8));
        assertEquals(2 * MIB, l.slotBytes());
        assertEquals(6, l.slots());
        FlexLinkConfig chunkOnly = FlexLinkConfig.builder().set(FlexLinkConfig.CHUNK_BYTES, "16M").build();
        StagingLayout c = StagingGeometry.layout(chunkOnly, 8, EnqueueBudget.ONE_RANK_PER_THREAD);
        assertEquals(16 * MIB, c.slotBytes());
        assertEquals(2, c.slots(), "auto slots: 8 x 4 x 16 MiB would pass 256 MiB");
        assertEquals(8 * MIB, AUTO.chunkBytes(), "what auto means where no rule sizes it (the host ring, the rails)");
        assertEquals(4, AUTO.slots());
    }
}
