package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Where a producer's slot holds each consumer's piece: every other rank's, numbered without the producer. */
class StagingLayoutTest {
    private static final long MIB = 1L << 20;

    @Test
    void atTwoRanksAPieceIsTheWholeSlot() {
        StagingLayout two = new StagingLayout(2, 4, 8 * MIB);
        assertEquals(8 * MIB, two.pieceBytes());
        assertEquals(0, two.pieceOffset(0, 1));
        assertEquals(0, two.pieceOffset(1, 0));
        assertEquals(8 * MIB, new StagingLayout(1, 4, 8 * MIB).pieceBytes(), "one rank: one piece, its own");
    }

    @Test
    void theProducersPiecesAreDisjointAndInsideItsSlotAtEveryRankCount() {
        for (int n = 2; n <= 9; n++) {
            StagingLayout l = new StagingLayout(n, 2, 8 * MIB);
            long piece = l.pieceBytes();
            assertEquals(0, piece % StagingLayout.PIECE_ALIGN, n + " ranks: aligned pieces");
            assertTrue(piece * (n - 1) <= l.slotBytes(), n + " ranks: the pieces fit the slot");
            assertTrue(piece * n > l.slotBytes() - (long) (n - 1) * StagingLayout.PIECE_ALIGN,
                    n + " ranks: a piece is an (n - 1)-th of the slot, not an n-th: " + piece);
            for (int p = 0; p < n; p++) {
                long expected = 0;
                for (int j = 0; j < n; j++) {
                    if (j == p) {
                        continue;
                    }
                    assertEquals(expected, l.pieceOffset(p, j), n + " ranks, producer " + p + ", consumer " + j);
                    expected += piece;
                }
            }
        }
    }

    @Test
    void aConsumersPieceSitsAtOneOffsetInEveryProducerOnOneSideOfIt() {
        StagingLayout l = new StagingLayout(6, 2, 6 * MIB);
        int consumer = 3;
        for (int p = 0; p < consumer; p++) {
            assertEquals(2 * l.pieceBytes(), l.pieceOffset(p, consumer), "producer " + p + " below");
        }
        for (int p = consumer + 1; p < 6; p++) {
            assertEquals(3 * l.pieceBytes(), l.pieceOffset(p, consumer), "producer " + p + " above");
        }
    }

    @Test
    void aSlotHoldsAtLeastOneAlignedPiecePerConsumer() {
        StagingLayout tiny = new StagingLayout(64, 2, StagingLayout.SLOT_ALIGN);
        assertTrue(tiny.pieceBytes() >= StagingLayout.PIECE_ALIGN, "64 ranks of a 4 KiB slot: " + tiny.pieceBytes());
        assertTrue(tiny.pieceOffset(0, 63) + tiny.pieceBytes() <= tiny.slotBytes());
    }
}
