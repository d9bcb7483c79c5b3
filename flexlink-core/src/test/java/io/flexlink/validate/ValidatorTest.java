package io.flexlink.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** NCCL's argument rules, checked before anything is enqueued; messages name the argument. */
class ValidatorTest {
    private static String invalid(Collective c, long send, long recv, long count, DataType type, ReduceOp op,
                                  int root, int rank, int size) {
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> Validator.checkCall(c, send, recv, count, type, op, root, rank, size));
        assertEquals(Result.INVALID_ARGUMENT, e.result());
        return e.getMessage();
    }

    @Test
    void eachBadArgumentIsNamed() {
        assertTrue(invalid(Collective.ALL_REDUCE, 8, 8, -1, DataType.FLOAT32, ReduceOp.SUM, 0, 0, 2).contains("count"));
        assertTrue(invalid(Collective.ALL_REDUCE, 8, 8, 1, null, ReduceOp.SUM, 0, 0, 2).contains("datatype"));
        assertTrue(invalid(Collective.ALL_REDUCE, 8, 8, 1, DataType.INT8, null, 0, 0, 2).contains("op"));
        assertTrue(invalid(Collective.BROADCAST, 8, 8, 1, DataType.INT8, ReduceOp.SUM, 2, 0, 2).contains("root"));
        assertTrue(invalid(Collective.REDUCE, 8, 8, 1, DataType.INT8, ReduceOp.SUM, -1, 0, 2).contains("root"));
        assertTrue(invalid(Collective.ALL_REDUCE, 0, 8, 1, DataType.INT8, ReduceOp.SUM, 0, 0, 2).contains("sendbuff"));
        assertTrue(invalid(Collective.ALL_REDUCE, 8, 0, 1, DataType.INT8, ReduceOp.SUM, 0, 0, 2).contains("recvbuff"));
        assertTrue(invalid(Collective.ALL_REDUCE, 8, 8, Long.MAX_VALUE / 2, DataType.INT64, ReduceOp.SUM, 0, 0, 2)
                .contains("overflow"));
    }

    @Test
    void buffersAreNeededOnlyWhereNcclReadsOrWritesThem() {
        // Broadcast reads sendbuff on the root only; Reduce writes recvbuff on the root only
        Validator.checkCall(Collective.BROADCAST, 0, 64, 4, DataType.INT32, ReduceOp.SUM, 1, 0, 2);
        Validator.checkCall(Collective.REDUCE, 64, 0, 4, DataType.INT32, ReduceOp.SUM, 1, 0, 2);
        Validator.checkCall(Collective.ALL_REDUCE, 0, 0, 0, DataType.INT32, ReduceOp.SUM, 0, 0, 2);
    }

    @Property
    void inPlaceIsExactlyNcclsPositionAndAnyOtherOverlapIsRefused(
            @ForAll @IntRange(min = 1, max = 8) int size, @ForAll @IntRange(min = 0, max = 7) int rankSeed,
            @ForAll @LongRange(min = 1, max = 4096) long count, @ForAll @LongRange(min = -4096, max = 4096) long shift) {
        int rank = rankSeed % size;
        long recv = 1 << 20;
        long sz = 4;
        long inPlace = recv + rank * count * sz;
        long send = inPlace + shift;
        boolean overlaps = send < recv + size * count * sz && recv < send + count * sz;
        if (!overlaps || send == inPlace) {
            Validator.checkCall(Collective.ALL_GATHER, send, recv, count, DataType.FLOAT32, ReduceOp.SUM, 0, rank, size);
        } else {
            String m = invalid(Collective.ALL_GATHER, send, recv, count, DataType.FLOAT32, ReduceOp.SUM, 0, rank, size);
            assertTrue(m.contains("sendbuff") && m.contains("in-place"), m);
        }
    }

    @Property
    void aReductionsBuffersAreEqualOrDisjoint(@ForAll @LongRange(min = 1, max = 4096) long count,
                                             @ForAll @LongRange(min = -8192, max = 8192) long shift) {
        long send = 1 << 20;
        long recv = send + shift;
        boolean overlaps = Math.abs(shift) < count * 8;
        if (!overlaps || shift == 0) {
            Validator.checkCall(Collective.ALL_REDUCE, send, recv, count, DataType.INT64, ReduceOp.MAX, 0, 0, 3);
        } else {
            assertTrue(invalid(Collective.ALL_REDUCE, send, recv, count, DataType.INT64, ReduceOp.MAX, 0, 0, 3)
                    .contains("overlaps"));
        }
    }
}
