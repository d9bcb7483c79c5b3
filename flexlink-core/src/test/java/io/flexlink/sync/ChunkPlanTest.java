package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** How a range is cut into pipelined chunks. */
class ChunkPlanTest {
    @Property
    void chunksTileTheRangeAlignedAndBounded(@ForAll @LongRange(min = 0, max = 1L << 28) long length,
                                             @ForAll @IntRange(min = 0, max = 6) int alignShift,
                                             @ForAll @IntRange(min = 12, max = 24) int maxShift) {
        long align = 1L << alignShift;
        long max = 1L << maxShift;
        ChunkPlan p = new ChunkPlan().plan(length, max, align, 1024);
        assertEquals(length == 0, p.count() == 0);
        long at = 0;
        for (int c = 0; c < p.count(); c++) {
            assertEquals(at, p.start(c), "chunk " + c + " starts where the last ended");
            assertTrue(p.length(c) > 0 && p.length(c) <= max, "chunk " + c + " of " + p.length(c));
            assertEquals(0, p.start(c) % align, "chunk " + c + " starts aligned");
            at += p.length(c);
        }
        assertEquals(length, at, "the chunks cover the range");
        assertEquals(length, p.start(p.count()), "past the end: the range's length");
        assertEquals(0, p.length(p.count()));
    }

    @Test
    void aLongRangeRampsUpAndDown() {
        long max = 1 << 20;
        ChunkPlan p = new ChunkPlan().plan(16 * max, max, 64, 1024);
        assertEquals(max / 8, p.length(0));
        assertEquals(max / 4, p.length(1));
        assertEquals(max / 2, p.length(2));
        assertEquals(max, p.length(3));
        assertEquals(max / 8, p.length(p.count() - 1));
        assertEquals(max / 4, p.length(p.count() - 2));
    }

    @Test
    void aShortRangeIsCutInAboutFourChunksNoSmallerThanTheMinimum() {
        ChunkPlan p = new ChunkPlan().plan(40_000, 1 << 20, 64, 1024);
        assertEquals(4, p.count());
        ChunkPlan tiny = new ChunkPlan().plan(3000, 1 << 20, 64, 1024);
        assertEquals(3, tiny.count(), "chunks of at least the minimum");
    }
}
