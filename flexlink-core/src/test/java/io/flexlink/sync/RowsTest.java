package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Where the pieces of an item lie, and where the last owners' short segments end. */
class RowsTest {
    @Test
    void aSharedItemIsOnePieceForEveryRank() {
        Rows r = new Rows().set(1000, 0, 64);
        assertTrue(r.shared());
        assertEquals(1000, r.address(5));
        assertEquals(64, r.bytes(5));
    }

    @Test
    void rowsAreClippedWhereTheRangeEnds() {
        // segments of 100 bytes, the range 250 bytes long, a chunk of 40 bytes starting 30 into each segment
        Rows r = new Rows().set(30, 100, 40, 250 - 30);
        assertEquals(40, r.bytes(0));
        assertEquals(40, r.bytes(1));
        assertEquals(20, r.bytes(2), "segment 2 ends at 250: 20 bytes of this chunk");
        assertEquals(0, r.bytes(3), "segment 3 is empty");
        assertEquals(330, r.address(3));
    }

    @Test
    void unclippedRowsAllHaveTheirBytes() {
        Rows r = new Rows().set(0, 1 << 20, 4096);
        for (int j = 0; j < 64; j++) {
            assertEquals(4096, r.bytes(j));
        }
    }
}
