package io.flexlink.hier;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.Stream;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * A large AllReduce in pieces whose stages overlap: the node's ReduceScatter and AllGather of each piece
 * run on the caller's stream, the rail's AllReduce of each piece on a stream of its own, so that piece
 * {@code p}'s rail stage runs while the node works on pieces {@code p + 1} (ReduceScatter) and
 * {@code p - 1} (AllGather). The caller's stream enqueues RS(0), RS(1), AG(0), RS(2), AG(1), ...,
 * AG(K-1), each AllGather waiting for its piece's rail stage; a piece's rail stage waits for its
 * ReduceScatter. The call then costs about {@code K · max(2a, r)} plus one piece's fill and drain (a:
 * one node stage of a piece, r: its rail stage) instead of {@code K · (2a + r)}: NCCL's flat ring
 * overlaps its NVLink and network hops the same way, and without it a hierarchical call would be slower
 * than NCCL's. Every element is still reduced once, in one order: pieces only cut the buffer.
 *
 * <p>The stages reported: {@code intra.pre} from the call's start to the first rail stage (the fill),
 * {@code inter} the rail stream's busy span, {@code intra.post} from the last rail stage to the end.
 */
final class PipelinedAllReduce implements AutoCloseable {
    /** Most pieces of one call. */
    static final int MAX_PIECES = 8;

    private final HierRank h;
    private final StageTimer timer;
    private final Zeros zeros;
    private final RuntimeStream rails;
    private final RuntimeEvent[] scattered = new RuntimeEvent[MAX_PIECES];
    private final RuntimeEvent[] reduced = new RuntimeEvent[MAX_PIECES];

    PipelinedAllReduce(Backend backend, int device, HierRank h, StageTimer timer, Zeros zeros) {
        this.h = h;
        this.timer = timer;
        this.zeros = zeros;
        this.rails = backend.createStream(device, "hier.rail.r" + h.rank);
        for (int p = 0; p < MAX_PIECES; p++) {
            scattered[p] = backend.createEvent(device, false);
            reduced[p] = backend.createEvent(device, false);
        }
    }

    /** Pieces for {@code bytes} per rank with pieces of about {@code pieceBytes}: 1 means run it unpiped. */
    static int pieces(long bytes, long pieceBytes) {
        return pieceBytes <= 0 ? 1 : (int) Math.max(1, Math.min(MAX_PIECES, bytes / pieceBytes));
    }

    /**
     * The main part of an AllReduce: {@code s} shard elements per local rank ({@code s * L} elements from
     * element 0), in {@code k} pieces; the tail, if any, is the caller's.
     */
    void run(long send, long recv, long s, int k, DataType t, ReduceOp o, boolean intAvg, Stream us,
             RuntimeStream rs) {
        int sz = t.size();
        int big = h.localSize;
        long q = s / k;
        for (int p = 0; p <= k; p++) {
            if (p < k) {
                long off = p * q * big;
                long len = p == k - 1 ? s - p * q : q;
                long shard = recv + (off + h.local * len) * sz;
                h.intra.reduceScatter(send + off * sz, shard, len, t, o, us);
                rs.record(scattered[p]);
                rails.waitEvent(scattered[p]);
                if (p == 0) {
                    timer.stage(rails, 0, s * big * sz); // the fill ends where the rails begin
                }
                h.rail.allReduce(shard, shard, len, t, o, rails);
                if (intAvg) {
                    rails.reduce(shard, shard, zeros.ensure(len * sz), len, t, ReduceOp.AVG, h.size);
                }
                if (p == k - 1) {
                    // before reduced[p], which the caller's stream waits for: the call's last event then
                    // completes after this one, and the timer reads a set only once its last event did
                    timer.stage(rails, 1, s * sz);
                }
                rails.record(reduced[p]);
            }
            if (p > 0) { // the previous piece's AllGather, once its rail stage is done
                int g = p - 1;
                long off = g * q * big;
                long len = g == k - 1 ? s - g * q : q;
                rs.waitEvent(reduced[g]);
                h.intra.allGather(recv + (off + h.local * len) * sz, recv + off * sz, len, t, us);
            }
        }
    }

    /** The rails' stream, for the caller's drain checks. */
    RuntimeStream stream() {
        return rails;
    }

    @Override
    public void close() {
        rails.close();
        for (int p = 0; p < MAX_PIECES; p++) {
            scattered[p].close();
            reduced[p].close();
        }
    }
}
