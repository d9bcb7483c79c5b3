package io.flexlink.hier;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.launch.Groups;
import io.flexlink.ReduceOp;
import io.flexlink.Stream;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;

/**
 * The stages of each hierarchical collective, enqueued on the caller's stream. Rank {@code (j, l)} is
 * local index {@code l} of node {@code j}; {@code N} nodes of {@code L} ranks; {@code intra} is the node's
 * FlexLink communicator (null when {@code L == 1}), {@code rail} joins local index {@code l} of every node.
 * A buffer of {@code C} elements is cut into {@code L} shards of {@code s = C / L} and a tail of
 * {@code C mod L} elements, which goes through local index 0:
 *
 * <ul>
 *   <li>AllReduce: intra ReduceScatter into shard {@code l} of recv → rail AllReduce of the shard → intra
 *   AllGather; the tail: intra Reduce to local 0 → rail 0 AllReduce → intra Broadcast. From
 *   {@code flexlink.hier.pieceBytes} up, in pieces whose stages overlap ({@link PipelinedAllReduce}).</li>
 *   <li>ReduceScatter: intra ReduceScatter of the node's partial sums of blocks {@code (j', l)} into
 *   scratch → rail ReduceScatter into recv.</li>
 *   <li>AllGather: rail AllGather of each rank's block straight into its place in recv → intra AllGather
 *   of the blocks each rank now holds.</li>
 *   <li>Broadcast: intra Broadcast on the root's node → rail Broadcast of shard {@code l} from that node →
 *   intra AllGather on the other nodes.</li>
 *   <li>Reduce: intra ReduceScatter → rail Reduce of the shards to the root's node → intra AllGather there.</li>
 * </ul>
 *
 * Every element is reduced once, in one order (inside the node by FlexLink, then across nodes by one rail
 * rank), and copied to the others: every rank of every node holds the same bits. An integer AVG sums and
 * divides the reduced shard by the rank count once (NCCL divides the wrapped sum); a floating-point AVG
 * averages inside the node and again across nodes, dividing before adding as NCCL does.
 */
final class HierCollectives {
    private final HierRank h;
    private final Scratch scratch;
    private final Zeros zeros;
    private final StageTimer timer;
    private final PipelinedAllReduce piped;

    HierCollectives(HierRank h, Scratch scratch, Zeros zeros, StageTimer timer, PipelinedAllReduce piped) {
        this.h = h;
        this.scratch = scratch;
        this.zeros = zeros;
        this.timer = timer;
        this.piped = piped;
    }

    private static boolean intAvg(DataType t, ReduceOp op) {
        return op == ReduceOp.AVG && !t.isFloatingPoint();
    }

    /** The operation of the intra and rail stages: an integer AVG sums (and divides once at the end). */
    private static ReduceOp stageOp(DataType t, ReduceOp op) {
        return intAvg(t, op) ? ReduceOp.SUM : op;
    }

    /** Divides {@code count} elements at {@code dst} by the rank count, on the stream (integer AVG). */
    private void divide(boolean intAvg, long dst, long count, DataType t, RuntimeStream rs) {
        if (intAvg && count > 0) {
            rs.reduce(dst, dst, zeros.ensure(count * t.size()), count, t, ReduceOp.AVG, h.size);
        }
    }

    void allReduce(long send, long recv, long count, DataType t, ReduceOp op, Stream us, RuntimeStream rs) {
        int sz = t.size();
        boolean avg = intAvg(t, op);
        ReduceOp o = stageOp(t, op);
        Communicator intra = h.intra;
        if (intra == null) {
            timer.stage(rs, 0, -1);
            h.rail.allReduce(send, recv, count, t, o, rs);
            railOnly(count * sz, rs);
            divide(avg, recv, count, t, rs);
            return;
        }
        long s = count / h.localSize;
        long m = s * h.localSize;
        long tail = count - m;
        long shard = recv + h.local * s * sz;
        int pieces = PipelinedAllReduce.pieces(m * sz, h.pieceBytes);
        if (pieces > 1) { // large: the pieces' node and rail stages overlap
            piped.run(send, recv, s, pieces, t, o, avg, us, rs);
            if (tail > 0) {
                intra.reduce(send + m * sz, recv + m * sz, tail, t, o, 0, us);
                if (h.local == 0) {
                    h.rail.allReduce(recv + m * sz, recv + m * sz, tail, t, o, rs);
                    divide(avg, recv + m * sz, tail, t, rs);
                }
                intra.broadcast(recv + m * sz, recv + m * sz, tail, t, 0, us);
            }
            timer.stage(rs, 2, count * sz);
            return;
        }
        if (s > 0) {
            intra.reduceScatter(send, shard, s, t, o, us);
            timer.nodeCall(0, Collective.REDUCE_SCATTER, s, t);
        }
        if (tail > 0) {
            intra.reduce(send + m * sz, recv + m * sz, tail, t, o, 0, us);
        }
        timer.stage(rs, 0, count * sz);
        if (s > 0) {
            h.rail.allReduce(shard, shard, s, t, o, rs);
            divide(avg, shard, s, t, rs);
        }
        boolean tailHere = tail > 0 && h.local == 0;
        if (tailHere) {
            h.rail.allReduce(recv + m * sz, recv + m * sz, tail, t, o, rs);
            divide(avg, recv + m * sz, tail, t, rs);
        }
        timer.stage(rs, 1, (s + (tailHere ? tail : 0)) * sz);
        if (s > 0) {
            intra.allGather(shard, recv, s, t, us);
            timer.nodeCall(2, Collective.ALL_GATHER, s, t);
        }
        if (tail > 0) {
            intra.broadcast(recv + m * sz, recv + m * sz, tail, t, 0, us);
        }
        timer.stage(rs, 2, count * sz);
    }

    void reduceScatter(long send, long recv, long count, DataType t, ReduceOp op, Stream us, RuntimeStream rs) {
        int sz = t.size();
        boolean avg = intAvg(t, op);
        ReduceOp o = stageOp(t, op);
        if (h.intra == null) {
            timer.stage(rs, 0, -1);
            h.rail.reduceScatter(send, recv, count, count, t, o, rs);
            railOnly((long) h.size * count * sz, rs);
            divide(avg, recv, count, t, rs);
            return;
        }
        int n = h.nodes;
        long part = scratch.ensure(n * count * sz);
        if (h.nodeMajor) { // block (j', l) is rank j'L + l: one intra call per node block, grouped when small
            boolean group = startGroupIfSmall(count, sz);
            try {
                for (int j = 0; j < n; j++) {
                    h.intra.reduceScatter(send + (long) j * h.localSize * count * sz, part + j * count * sz, count,
                            t, o, us);
                }
            } finally {
                endGroup(group);
            }
        } else { // block (j', l) is rank l N + j': this rank's blocks are contiguous
            h.intra.reduceScatter(send, part, n * count, t, o, us);
        }
        timer.nodeCall(0, Collective.REDUCE_SCATTER, h.nodeMajor ? count : n * count, t);
        timer.stage(rs, 0, (long) h.size * count * sz);
        h.rail.reduceScatter(part, recv, count, count, t, o, rs);
        divide(avg, recv, count, t, rs);
        timer.stage(rs, 1, n * count * sz);
        timer.stage(rs, 2, -1);
    }

    void allGather(long send, long recv, long count, DataType t, Stream us, RuntimeStream rs) {
        int sz = t.size();
        int n = h.nodes;
        int big = h.localSize;
        if (h.intra == null) {
            timer.stage(rs, 0, -1);
            h.rail.allGather(send, recv, count, count, t, rs);
            railOnly(n * count * sz, rs);
            return;
        }
        timer.stage(rs, 0, -1);
        if (h.nodeMajor) {
            h.rail.allGather(send, recv + h.local * count * sz, count, big * count, t, rs);
            timer.stage(rs, 1, n * count * sz);
            boolean group = startGroupIfSmall(count, sz);
            try {
                for (int j = 0; j < n; j++) {
                    long node = recv + (long) j * big * count * sz;
                    h.intra.allGather(node + h.local * count * sz, node, count, t, us);
                }
            } finally {
                endGroup(group);
            }
        } else {
            long mine = recv + (long) h.local * n * count * sz;
            h.rail.allGather(send, mine, count, count, t, rs);
            timer.stage(rs, 1, n * count * sz);
            h.intra.allGather(mine, recv, n * count, t, us);
        }
        timer.nodeCall(2, Collective.ALL_GATHER, h.nodeMajor ? count : n * count, t);
        timer.stage(rs, 2, (long) h.size * count * sz);
    }

    void broadcast(long send, long recv, long count, DataType t, int root, Stream us, RuntimeStream rs) {
        int sz = t.size();
        int rootNode = h.layout.nodeOf(root);
        if (h.intra == null) {
            timer.stage(rs, 0, -1);
            h.rail.broadcast(send, recv, count, t, rootNode, rs);
            railOnly(count * sz, rs);
            return;
        }
        boolean home = h.node == rootNode;
        long s = count / h.localSize;
        long m = s * h.localSize;
        long tail = count - m;
        long shard = recv + h.local * s * sz;
        if (home) {
            h.intra.broadcast(send, recv, count, t, h.layout.localIndex(root), us);
            timer.nodeCall(0, Collective.BROADCAST, count, t);
        }
        timer.stage(rs, 0, home ? count * sz : -1);
        if (s > 0) {
            h.rail.broadcast(shard, shard, s, t, rootNode, rs);
        }
        boolean tailHere = tail > 0 && h.local == 0;
        if (tailHere) {
            h.rail.broadcast(recv + m * sz, recv + m * sz, tail, t, rootNode, rs);
        }
        timer.stage(rs, 1, (s + (tailHere ? tail : 0)) * sz);
        if (!home && s > 0) {
            h.intra.allGather(shard, recv, s, t, us);
            timer.nodeCall(2, Collective.ALL_GATHER, s, t);
        }
        if (!home && tail > 0) {
            h.intra.broadcast(recv + m * sz, recv + m * sz, tail, t, 0, us);
        }
        timer.stage(rs, 2, home ? -1 : count * sz);
    }

    void reduce(long send, long recv, long count, DataType t, ReduceOp op, int root, Stream us, RuntimeStream rs) {
        int sz = t.size();
        boolean avg = intAvg(t, op);
        ReduceOp o = stageOp(t, op);
        int rootNode = h.layout.nodeOf(root);
        boolean isRoot = h.rank == root;
        if (h.intra == null) {
            timer.stage(rs, 0, -1);
            h.rail.reduce(send, recv, count, t, o, rootNode, rs);
            railOnly(count * sz, rs);
            divide(avg && isRoot, recv, count, t, rs);
            return;
        }
        boolean home = h.node == rootNode;
        long s = count / h.localSize;
        long m = s * h.localSize;
        long tail = count - m;
        // the root gathers into recv; its node's other ranks into scratch of the whole size; others keep their shard
        long full = isRoot ? recv : home ? scratch.ensure(count * sz) : 0;
        long mine = home ? 0 : scratch.ensure((s + tail) * sz);
        long shard = home ? full + h.local * s * sz : mine;
        long tailAt = home ? full + m * sz : mine + s * sz;
        if (s > 0) {
            h.intra.reduceScatter(send, shard, s, t, o, us);
            timer.nodeCall(0, Collective.REDUCE_SCATTER, s, t);
        }
        if (tail > 0) {
            h.intra.reduce(send + m * sz, tailAt, tail, t, o, 0, us);
        }
        timer.stage(rs, 0, count * sz);
        if (s > 0) {
            h.rail.reduce(shard, shard, s, t, o, rootNode, rs);
            divide(avg && home, shard, s, t, rs);
        }
        boolean tailHere = tail > 0 && h.local == 0;
        if (tailHere) {
            h.rail.reduce(tailAt, tailAt, tail, t, o, rootNode, rs);
            divide(avg && home, tailAt, tail, t, rs);
        }
        timer.stage(rs, 1, (s + (tailHere ? tail : 0)) * sz);
        if (home && s > 0) {
            h.intra.allGather(shard, full, s, t, us);
            timer.nodeCall(2, Collective.ALL_GATHER, s, t);
        }
        if (home && tail > 0 && h.layout.localIndex(root) != 0) {
            h.intra.broadcast(tailAt, tailAt, tail, t, 0, us);
        }
        timer.stage(rs, 2, home ? count * sz : -1);
    }

    /** A node of one rank: the rail (enqueued by the caller, after stage 0) was the whole collective. */
    private void railOnly(long railBytes, RuntimeStream rs) {
        timer.stage(rs, 1, railBytes);
        timer.stage(rs, 2, -1);
    }

    /**
     * Opens a group for the intra calls of one collective, one per node block, when each is below
     * {@code flexlink.minSplitBytes}: the node then runs them back to back in one primary launch, as NCCL
     * would, instead of one launch each; larger calls stay separate so that each is split over the node's
     * paths. Returns whether it opened one.
     */
    private boolean startGroupIfSmall(long count, int sz) {
        boolean group = count * sz * h.localSize < h.minSplitBytes;
        if (group) {
            Groups.start();
        }
        return group;
    }

    private static void endGroup(boolean group) {
        if (group) {
            Groups.end();
        }
    }
}
