package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Assume;
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
    void aShortRangeIsCutInUpToFourChunksNoSmallerThanTheMinimum() {
        ChunkPlan p = new ChunkPlan().plan(40_000, 1 << 20, 64, 1024);
        assertEquals(4, p.count());
        ChunkPlan tiny = new ChunkPlan().plan(3000, 1 << 20, 64, 1024);
        assertEquals(2, tiny.count(), "as many chunks as the minimum allows: 3000 / 1024");
        assertEquals(1536, tiny.length(0), "equal chunks, aligned");
        assertEquals(1, new ChunkPlan().plan(1000, 1 << 20, 64, 1024).count(), "shorter than the minimum: one");
    }

    @Test
    void aMinimumAboveTheSlotStillKeepsEveryChunkWithinIt() {
        // eight ranks, one thread: a 3.2 MiB segment whose smallest worthwhile chunk is 1.7 MiB goes in one
        // chunk where a piece holds 4 MiB, and in four where it holds 1 MiB
        long min = (24L << 20) / 14 / 4;
        assertEquals(1, new ChunkPlan().plan(838_861, 1L << 20, 64, min).count());
        ChunkPlan small = new ChunkPlan().plan(838_861, 1L << 18, 64, min);
        assertEquals(4, small.count());
        assertTrue(small.length(0) <= 1L << 18, "within the slot");
    }

    @Property
    void aShortRangeHasNoMoreChunksThanItsMinimumAllows(@ForAll @LongRange(min = 1, max = 1L << 22) long length,
                                                        @ForAll @IntRange(min = 10, max = 22) int maxShift,
                                                        @ForAll @LongRange(min = 1, max = 1L << 22) long minChunk) {
        long max = 1L << maxShift;
        Assume.that(length < 4 * max);
        ChunkPlan p = new ChunkPlan().plan(length, max, 64, minChunk);
        long byMinimum = Math.max(1, Math.min(4, length / minChunk));
        long bySlot = (length + max - 1) / max;
        assertTrue(p.count() <= Math.max(byMinimum, bySlot), p.count() + " chunks");
        if (bySlot <= byMinimum) {
            for (int c = 0; c + 1 < p.count(); c++) {
                assertTrue(p.length(c) >= minChunk, "chunk " + c + " of " + p.length(c) + " < " + minChunk);
            }
        }
    }
}
