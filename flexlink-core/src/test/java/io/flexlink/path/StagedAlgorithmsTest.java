package io.flexlink.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.sync.Channel;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.sync.Lane;
import io.flexlink.sync.Rows;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The geometry of the staged algorithms, run against a channel that only records: every producer numbers
 * its items in the order it sends them, every consumer receives from each producer the items that producer
 * sent it, in the same order; a reduction's owners together receive every element of the range exactly
 * once from every other rank, and each owner's own segment is reduced over all of it.
 */
class StagedAlgorithmsTest {
    private static final long SEND = 1L << 40;
    private static final long RECV = 1L << 44;

    /** One send or receive of an item between two ranks. */
    record Transfer(int item, int producer, int consumer, long address, long bytes) {
    }

    private static final class Recording implements Channel {
        final int rank;
        final long slot;
        final long piece;
        final List<Transfer> sent = new ArrayList<>();
        final List<Transfer> received = new ArrayList<>();

        Recording(int rank, long slot, long piece) {
            this.rank = rank;
            this.slot = slot;
            this.piece = piece;
        }

        @Override
        public long slotBytes() {
            return slot;
        }

        @Override
        public long pieceBytes() {
            return piece;
        }

        @Override
        public void send(Lane lane, int item, Rows rows, long consumers) {
            for (long c = consumers; c != 0; c &= c - 1) {
                int j = Long.numberOfTrailingZeros(c);
                sent.add(new Transfer(item, rank, j, rows.address(j), rows.bytes(j)));
            }
        }

        @Override
        public void receive(Lane lane, int item, long producers, boolean pieces, Rows dst) {
            for (long p = producers; p != 0; p &= p - 1) {
                int q = Long.numberOfTrailingZeros(p);
                received.add(new Transfer(item, q, rank, dst.address(q), dst.bytes(q)));
            }
        }

        @Override
        public long receiveRows(Lane lane, int item, long producers, boolean pieces, long bytes) {
            for (long p = producers; p != 0; p &= p - 1) {
                received.add(new Transfer(item, Long.numberOfTrailingZeros(p), rank, -1, bytes));
            }
            return 0;
        }

        @Override
        public long rowPitch(long bytes) {
            return bytes;
        }

        @Override
        public void abort() {
        }

        @Override
        public void releaseAll() {
        }

        @Override
        public int abortedBy() {
            return -1;
        }

        @Override
        public String describeStall() {
            return null;
        }

        @Override
        public void close() {
        }
    }

    @Property(tries = 300)
    void everyItemIsReceivedAsSentAndEveryElementReducedOnce(
            @ForAll @IntRange(min = 0, max = 4) int collective, @ForAll @IntRange(min = 1, max = 9) int ranks,
            @ForAll @LongRange(min = 0, max = 300_000) long length, @ForAll @IntRange(min = 0, max = 3) int typeIndex,
            @ForAll @IntRange(min = 0, max = 8) int rootSeed) {
        Collective c = Collective.values()[collective];
        DataType type = new DataType[] {DataType.INT8, DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64}[typeIndex];
        int root = rootSeed % ranks;
        long offset = 512;
        long count = length + 2 * offset;
        int sz = type.size();
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            Recording[] channels = new Recording[ranks];
            for (int r = 0; r < ranks; r++) {
                channels[r] = new Recording(r, 64 << 10, (64 << 10) / ranks / 256 * 256);
                try (StagedAlgorithms a = new StagedAlgorithms(backend, 0, r, ranks, channels[r], new Lane(NOOP),
                        new Lane(NOOP), new Lane(NOOP), EnqueueBudget.ONE_RANK_PER_THREAD)) {
                    a.run(new CollectiveCall().set(c, SEND, RECV, count, type, ReduceOp.SUM, root, NOOP), offset, length);
                }
            }
            List<Transfer> sent = new ArrayList<>();
            List<Transfer> received = new ArrayList<>();
            for (Recording ch : channels) {
                for (int i = 1; i < ch.sent.size(); i++) {
                    assertTrue(ch.sent.get(i).item() >= ch.sent.get(i - 1).item(), "items numbered in send order");
                }
                for (int i = 1; i < ch.received.size(); i++) {
                    assertTrue(ch.received.get(i).item() >= ch.received.get(i - 1).item(),
                            "items received in ascending order");
                }
                sent.addAll(ch.sent);
                received.addAll(ch.received);
            }
            // what each consumer takes from each producer is exactly what that producer sent it, in order
            for (int p = 0; p < ranks; p++) {
                for (int q = 0; q < ranks; q++) {
                    List<Integer> out = new ArrayList<>();
                    List<Integer> in = new ArrayList<>();
                    for (Transfer t : sent) {
                        if (t.producer() == p && t.consumer() == q) {
                            out.add(t.item());
                        }
                    }
                    for (Transfer t : received) {
                        if (t.producer() == p && t.consumer() == q) {
                            in.add(t.item());
                        }
                    }
                    assertEquals(out, in, c + ": items " + p + " -> " + q);
                }
            }
            long elements = 0;
            for (Transfer t : sent) {
                elements += t.bytes() / sz;
            }
            assertEquals(expectedElementsSent(c, ranks, length, root, Math.max(1, 256 / sz)), elements,
                    c + " over " + ranks + " ranks");
        }
    }

    @Example
    void anAllReducesResultsTrailItsContributionsByOneChunk() {
        // 2 ranks, 4 MiB of floats, 64 KiB items: each owner's 2 MiB segment is many chunks; its send lane must
        // carry chunk c + 1's contributions (read from the send buffer) before chunk c's result (from recv)
        long length = 1L << 20;
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            Recording ch = new Recording(0, 64 << 10, 32 << 10);
            try (StagedAlgorithms a = new StagedAlgorithms(backend, 0, 0, 2, ch, new Lane(NOOP), new Lane(NOOP),
                    new Lane(NOOP), EnqueueBudget.ONE_RANK_PER_THREAD)) {
                a.run(new CollectiveCall().set(Collective.ALL_REDUCE, SEND, RECV, length, DataType.FLOAT32,
                        ReduceOp.SUM, 0, NOOP), 0, length);
            }
            StringBuilder kinds = new StringBuilder();
            for (int i = 0; i < ch.sent.size(); i++) {
                Transfer t = ch.sent.get(i);
                assertEquals(i, t.item(), "consecutive items");
                kinds.append(t.address() >= RECV ? 'R' : 'C');
            }
            assertTrue(ch.sent.size() >= 6, "several chunks: " + ch.sent.size());
            String expected = "C" + "CR".repeat(ch.sent.size() / 2 - 1) + "R";
            assertEquals(expected, kinds.toString(), "contributions (C) and results (R) on the send lane");
        }
    }

    /** Elements all producers together send: write once, read by all, every element reduced by one owner. */
    private static long expectedElementsSent(Collective c, int n, long length, int root, long align) {
        switch (c) {
            case ALL_GATHER: return (long) n * (n - 1) * length;
            case BROADCAST: return (long) (n - 1) * length;
            case REDUCE_SCATTER: return (long) n * (n - 1) * length;
            case ALL_REDUCE: return 2L * (n - 1) * length;
            default: return (long) n * length - ownerSegment(n, length, root, align); // the root's stays home
        }
    }

    /** Owner {@code j}'s share of an AllReduce or Reduce: an aligned n-th, the last ones short or empty. */
    private static long ownerSegment(int n, long length, int j, long align) {
        long seg = ((length + n - 1) / n + align - 1) / align * align;
        return Math.max(0, Math.min(seg, length - j * seg));
    }

    private static final RuntimeStream NOOP = new RuntimeStream() {
        @Override
        public String label() {
            return "noop";
        }

        @Override
        public void copy(long dst, long src, long bytes) {
        }

        @Override
        public void waitValue32(PinnedMemory mem, long offset, int value) {
        }

        @Override
        public void writeValue32(PinnedMemory mem, long offset, int value) {
        }

        @Override
        public void waitAny(PinnedMemory mem, long offset, int mask) {
        }

        @Override
        public void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
        }

        @Override
        public void scale(long dst, long a, long count, DataType type, long scalar, int divisor) {
        }

        @Override
        public void reduceFromHost(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                                   ReduceOp op, int divisor) {
        }

        @Override
        public FlexLinkException failure() {
            return null;
        }

        @Override
        public void record(RuntimeEvent event) {
        }

        @Override
        public void waitEvent(RuntimeEvent event) {
        }

        @Override
        public int device() {
            return 0;
        }

        @Override
        public void synchronize() {
        }

        @Override
        public boolean isIdle() {
            return true;
        }

        @Override
        public void close() {
        }
    };
}
