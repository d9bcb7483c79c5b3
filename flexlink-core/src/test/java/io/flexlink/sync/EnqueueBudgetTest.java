package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The smallest chunk worth its host enqueue. */
class EnqueueBudgetTest {
    @Test
    void theSmallestChunkGrowsWithTheRanksAThreadDrivesAndShrinksWithTheLinkCrossings() {
        EnqueueBudget eight = new EnqueueBudget(8);
        assertEquals(8 * (3L << 20) / 14, eight.minChunkBytes(14), "8-rank AllReduce: 2 (n - 1) crossings");
        assertEquals(8 * (3L << 20) / 7, eight.minChunkBytes(7), "8-rank AllGather: n - 1");
        assertEquals(ChunkPlan.MIN_CHUNK_BYTES, EnqueueBudget.ONE_RANK_PER_THREAD.minChunkBytes(14),
                "never below the protocol's own minimum");
        assertEquals(3L << 20, EnqueueBudget.ONE_RANK_PER_THREAD.minChunkBytes(0), "no crossings count as one");
        assertThrows(IllegalArgumentException.class, () -> new EnqueueBudget(0));
    }
}
