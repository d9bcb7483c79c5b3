package io.flexlink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Result mirrors NCCL 2.30's ncclResult_t: each code its own value, ncclTimeout included, nothing else. */
class ResultTest {
    @Test
    void everyCodeIsNcclsValueInOrder() {
        Result[] all = Result.values();
        assertEquals(9, all.length, "ncclNumResults in NCCL 2.30");
        for (int i = 0; i < all.length; i++) {
            assertEquals(i, all[i].code(), all[i].name());
            assertEquals(all[i], Result.fromCode(i));
        }
        assertEquals(8, Result.TIMEOUT.code());
        assertEquals(7, Result.IN_PROGRESS.code());
    }

    @Test
    void aCodeNcclDoesNotDefineIsAnInternalError() {
        assertEquals(Result.INTERNAL_ERROR, Result.fromCode(9));
        assertEquals(Result.INTERNAL_ERROR, Result.fromCode(-1));
    }

    @Test
    void timeoutHasItsOwnText() {
        assertEquals("operation timed out", Result.TIMEOUT.description());
    }
}
