package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.DataType;
import java.util.ArrayList;
import java.util.List;

/**
 * The sizes of a sweep and, per size, the element counts of each rank's buffers, with nccl-tests'
 * conventions: the printed size is the larger of the send and receive buffers in bytes; the printed
 * count is the count passed to the collective (per rank for AllGather and ReduceScatter, whose per-rank
 * counts are rounded down to 16-byte multiples); algbw is the printed size over the time.
 */
public final class SizeSweep {
    private SizeSweep() {
    }

    /** One size of one type: what the collective is called with, and what nccl-tests prints. */
    public static final class Shape {
        /** The count passed to the collective (nccl-tests' count column). */
        public final long count;
        /** Elements of each rank's send buffer. */
        public final long sendElems;
        /** Elements of each rank's receive buffer. */
        public final long recvElems;
        /** Bytes of the larger buffer (nccl-tests' size column). */
        public final long bytes;

        Shape(long count, long sendElems, long recvElems, int typeSize) {
            this.count = count;
            this.sendElems = sendElems;
            this.recvElems = recvElems;
            this.bytes = Math.max(sendElems, recvElems) * typeSize;
        }
    }

    /** The sizes from {@code min} to {@code max}: times {@code factor} when it is above 1, else plus {@code step}. */
    public static List<Long> sizes(long min, long max, long factor, long step) {
        List<Long> out = new ArrayList<>();
        long size = min;
        while (size <= max) {
            out.add(size);
            long next;
            try {
                next = factor > 1 ? Math.multiplyExact(size, factor) : Math.addExact(size, step);
            } catch (ArithmeticException e) {
                break;
            }
            if (next <= size) {
                break;
            }
            size = next;
        }
        return out;
    }

    /** The buffers of {@code c} for a sweep size of {@code size} bytes of {@code type} on {@code ranks} ranks. */
    public static Shape shape(Collective c, long size, DataType type, int ranks) {
        int sz = type.size();
        long count = size / sz;
        switch (c) {
            case ALL_GATHER: {
                long base = perRank(count, sz, ranks);
                return new Shape(base, base, base * ranks, sz);
            }
            case REDUCE_SCATTER: {
                long base = perRank(count, sz, ranks);
                return new Shape(base, base * ranks, base, sz);
            }
            default:
                return new Shape(count, count, count, sz);
        }
    }

    /** {@code count / ranks} rounded down to a multiple of 16 bytes, as nccl-tests does. */
    private static long perRank(long count, int typeSize, int ranks) {
        long align = Math.max(1, 16 / typeSize);
        return (count / ranks) / align * align;
    }
}
