package io.flexlink.hier;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.validate.AllToAllvArgs;
import io.flexlink.validate.Validator;

/**
 * AlltoAll, AlltoAllv, Gather, Scatter and Send/Recv of a multi-node communicator. AlltoAll runs in two
 * stages ({@link #twoStage}): an AlltoAll inside the node gathers on local index {@code l} what the node
 * sends to local index {@code l} of every node, then each rank exchanges with the rank of its local index on
 * every other node over the peer links (rail-aligned pairs), so each block crosses between nodes once. Where
 * the job has no peer links (two ranks of a node share a device, which the primary transport refuses) it
 * gathers every rank's whole send buffer instead ({@code n} times the bytes, {@code n × n × count} elements
 * of scratch). Gather gathers to every rank, Scatter broadcasts the root's whole buffer (built on
 * {@link HierCollectives}). AlltoAllv is the AlltoAll over blocks of the largest count any rank sends to any
 * rank ({@link CountAgreement} tells every rank the counts): each piece is copied into its block of a padded
 * buffer, the blocks are exchanged as AlltoAll's, and each received piece is copied out to its displacement.
 *
 * <p>Send and Recv between ranks of one node go through the node's communicator (inside a group too, where
 * a rank may also send to itself); between nodes they go over the peer links ({@link CrossNodeTransfers}),
 * which join the two ranks directly, so no third rank takes part.
 */
final class HierExchanges {
    private final HierRank h;
    private final HierCollectives collectives;
    private final Scratch scratch;
    private final StageTimer timer;
    /** The peer links' lane, for AlltoAll's stage between nodes; null where the job has no peer links. */
    private final CrossNodeTransfers cross;
    /** The transfers of one AlltoAll between nodes, reused call after call. */
    private final PeerOps ops = new PeerOps();

    /** {@code scratch} is the communicator's; its calls are serialized, so no two stages use it at once. */
    HierExchanges(HierRank h, HierCollectives collectives, Scratch scratch, StageTimer timer,
                  CrossNodeTransfers cross) {
        this.h = h;
        this.collectives = collectives;
        this.scratch = scratch;
        this.timer = timer;
        this.cross = cross;
    }

    /**
     * Refuses, before anything is enqueued, a Send or Recv to this rank outside a group (its other half could
     * never be called). Inside a group the node's communicator pairs the two halves, or on a node of one rank
     * the peer links' lane ({@link #onLane}).
     */
    void checkPeer(Collective c, int peer, boolean grouped) {
        if (peer == h.rank && !grouped) {
            throw new FlexLinkException(Result.INVALID_USAGE, "peer: rank " + peer + " is this rank; a transfer to "
                    + "itself needs its send and receive in one group (groupStart/groupEnd)");
        }
    }

    /** Refuses a collective inside a group: the group would defer the node stages past the rail stage that reads them. */
    void refuseGrouped(Collective c) {
        if (io.flexlink.launch.Groups.active() && !c.pointToPoint()) {
            throw new FlexLinkException(Result.INVALID_USAGE, "rank " + h.rank + "/" + h.size + " (node " + h.node
                    + " of " + h.nodes + "): a multi-node communicator's collectives cannot be grouped "
                    + "(groupStart/groupEnd): call them outside a group");
        }
    }

    /** Whether a checked transfer goes over the peer links' lane: to another node, or to itself with no node communicator. */
    boolean onLane(int peer) {
        return h.layout.nodeOf(peer) != h.node || peer == h.rank && h.intra == null;
    }

    /** Refuses a transfer to another node where the job has no peer links ({@link Rails#peers}). */
    void checkCrossNode(int peer) {
        if (h.peers == null) {
            throw new FlexLinkException(Result.INVALID_USAGE, "peer: rank " + peer + " is on node "
                    + h.layout.nodeOf(peer) + ", rank " + h.rank + " on node " + h.node + "; this job has no "
                    + "links between nodes for Send and Recv: two ranks of a node share a device, which the "
                    + "primary transport refuses; allToAllv moves uneven blocks between nodes");
        }
    }

    void allToAll(long send, long recv, long count, DataType t, Stream us, RuntimeStream rs) {
        long block = count * t.size();
        if (cross != null) {
            twoStage(send, recv, count, t, us, rs, scratch.ensure(3 * block * h.size));
            return;
        }
        long all = exchangeBlocks(send, scratch.ensure(block * h.size * h.size), count, t, us, rs);
        rs.copyRows(recv, block, all, block * h.size, block, h.size);
    }

    /**
     * AlltoAll of blocks of {@code count} elements in two stages, for rank {@code (j, l)} of {@code N} nodes of
     * {@code L}; {@code work} holds three rows of {@code n} blocks (P, Q, S). Node stage: P row {@code l'} holds
     * this rank's blocks for local index {@code l'} of every node (its send buffer itself when placed
     * round-robin); the node's AlltoAll of rows leaves in Q row {@code l''} what local index {@code l''} sends
     * to local index {@code l} of every node. Rail-aligned stage: S row {@code j'} (Q transposed) goes to rank
     * {@code (j', l)}, which sends back what its node has for this rank, row by source local index: the
     * receive buffer's own layout when placed in blocks, else received into P and transposed into it.
     */
    private void twoStage(long send, long recv, long count, DataType t, Stream us, RuntimeStream rs, long work) {
        int n = h.nodes;
        int big = h.localSize;
        long b = count * t.size();
        long p = work;
        long q = work + b * h.size;
        long s = q + b * h.size;
        if (h.intra == null) {
            q = send; // a node of one rank: its send buffer is already one block per node
            timer.stage(rs, 0, -1);
        } else {
            long rows = send;
            if (h.nodeMajor) { // rank j'L + l': the blocks of local index l' lie L blocks apart
                for (int l = 0; l < big; l++) {
                    rs.copyRows(p + l * n * b, b, send + l * b, big * b, b, n);
                }
                rows = p;
            }
            h.intra.allToAll(rows, q, n * count, t, us);
            timer.stage(rs, 0, (long) h.size * b);
        }
        for (int j = 0; j < n; j++) {
            rs.copyRows(s + j * big * b, b, q + j * b, n * b, b, big);
        }
        long into = h.nodeMajor ? recv : p;
        ops.clear();
        for (int j = 0; j < n; j++) {
            if (j != h.node) {
                int peer = h.layout.rankAt(j, h.local);
                ops.add(true, peer, s + j * big * b, big * b);
                ops.add(false, peer, into + j * big * b, big * b);
            }
        }
        rs.copy(into + h.node * big * b, s + h.node * big * b, big * b);
        cross.exchangeNow(ops, rs);
        ops.clear();
        timer.stage(rs, 1, (n - 1L) * big * b);
        if (!h.nodeMajor) { // rank l''N + j' sent row j' block l''
            for (int j = 0; j < n; j++) {
                rs.copyRows(recv + j * b, n * b, p + j * big * b, b, b, big);
            }
        }
        timer.stage(rs, 2, -1);
    }

    /**
     * {@code counts[i][j]}: what rank {@code i} sends to rank {@code j}, the same matrix on every rank;
     * {@code max} its largest entry (positive), the block of the padded AlltoAll.
     */
    void allToAllv(long send, long[] sendDispls, long recv, long[] recvDispls, long[][] counts, long max, DataType t,
                   Stream us, RuntimeStream rs) {
        int sz = t.size();
        long block = max * sz;
        long row = block * h.size;
        // the padded row, then the received blocks: n rows of them when gathered, one (and the work) in two stages
        long padded = scratch.ensure(row * (cross != null ? 5 : h.size + 1L));
        long[] mine = counts[h.rank];
        for (int j = 0; j < h.size; j++) {
            if (mine[j] > 0) {
                rs.copy(padded + j * block, send + sendDispls[j] * sz, mine[j] * sz);
            }
        }
        long all = padded + row;
        long stride = block;
        if (cross != null) {
            twoStage(padded, all, max, t, us, rs, padded + 2 * row);
        } else {
            all = exchangeBlocks(padded, padded + row, max, t, us, rs);
            stride = row;
        }
        for (int i = 0; i < h.size; i++) {
            long from = counts[i][h.rank];
            if (from > 0) {
                rs.copy(recv + recvDispls[i] * sz, all + i * stride, from * sz);
            }
        }
    }

    /**
     * The AlltoAll of both: gathers every rank's {@code size} blocks of {@code count} elements at {@code send}
     * into {@code gathered} ({@code size × size} blocks) and returns where the block of rank 0 for this rank
     * lies; rank {@code r}'s is {@code r × size} blocks further (row r is r's send buffer, its block
     * {@code rank} what r sends here).
     */
    private long exchangeBlocks(long send, long gathered, long count, DataType t, Stream us, RuntimeStream rs) {
        collectives.allGather(send, gathered, count * h.size, t, us, rs);
        return gathered + h.rank * count * t.size();
    }

    void gather(long send, long recv, long count, DataType t, int root, Stream us, RuntimeStream rs) {
        long into = h.rank == root ? recv : scratch.ensure(count * t.size() * h.size);
        collectives.allGather(send, into, count, t, us, rs);
    }

    void scatter(long send, long recv, long count, DataType t, int root, Stream us, RuntimeStream rs) {
        long block = count * t.size();
        long all = h.rank == root ? send : scratch.ensure(block * h.size);
        collectives.broadcast(all, all, count * h.size, t, root, us, rs);
        long mine = all + h.rank * block;
        if (mine != recv) {
            rs.copy(recv, mine, block);
        }
    }

    void send(long buff, long count, DataType t, int peer, Stream us) {
        h.intra.send(buff, count, t, h.layout.localIndex(peer), us);
    }

    void recv(long buff, long count, DataType t, int peer, Stream us) {
        h.intra.recv(buff, count, t, h.layout.localIndex(peer), us);
    }

    /** The stages of one call outside a group, by collective. */
    void stages(Collective c, long send, long recv, long count, DataType t, ReduceOp op, int root, Stream us,
                RuntimeStream rs) {
        switch (c) {
            case ALL_REDUCE -> collectives.allReduce(send, recv, count, t, op, us, rs);
            case ALL_GATHER -> collectives.allGather(send, recv, count, t, us, rs);
            case REDUCE_SCATTER -> collectives.reduceScatter(send, recv, count, t, op, us, rs);
            case BROADCAST -> collectives.broadcast(send, recv, count, t, root, us, rs);
            case REDUCE -> collectives.reduce(send, recv, count, t, op, root, us, rs);
            case ALL_TO_ALL -> allToAll(send, recv, count, t, us, rs);
            case GATHER -> gather(send, recv, count, t, root, us, rs);
            case SCATTER -> scatter(send, recv, count, t, root, us, rs);
            case SEND, RECV -> transfer(c, send, recv, count, t, root, us);
        }
    }

    void transfer(Collective c, long send, long recv, long count, DataType t, int peer, Stream us) {
        if (c == Collective.SEND) {
            send(send, count, t, peer, us);
        } else {
            recv(recv, count, t, peer, us);
        }
    }

    /** What every rank checks of its allToAllv before the counts are agreed: outside a group, its arguments, its stream. */
    static void checkAllToAllv(String who, AllToAllvArgs args, Backend backend, int device, int size, long send,
                               long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts, long[] recvDispls,
                               DataType type, Stream stream) {
        if (Groups.active()) {
            throw new FlexLinkException(Result.INVALID_USAGE, who + ": a multi-node communicator's "
                    + "allToAllv cannot be grouped (groupStart/groupEnd): call it outside a group");
        }
        args.check(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, size);
        AllToAllvArgs.checkMemory(backend, send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, device);
        Validator.checkStream(backend, stream, device);
    }
}
