package io.flexlink.hier;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.validate.AllToAllvArgs;
import io.flexlink.validate.Validator;

/**
 * AlltoAll, AlltoAllv, Gather, Scatter and Send/Recv of a multi-node communicator, built on its AllGather
 * and Broadcast ({@link HierCollectives}) and the node's communicator. They are correct and move more than
 * the minimum: AlltoAll gathers every rank's whole send buffer ({@code n} times the bytes an exchange
 * needs, and {@code n × n × count} elements of scratch), Gather gathers to every rank, Scatter broadcasts
 * the root's whole buffer. AlltoAllv is the same AlltoAll over blocks of the largest count any rank sends
 * to any rank ({@link CountAgreement} tells every rank the counts): each piece is copied into its block of a
 * padded buffer, the blocks are exchanged as AlltoAll's, and each received piece is copied out to its
 * displacement. A two-stage exchange (node, then rail) needs a rail AlltoAll, which the rails do not have
 * yet.
 *
 * <p>Send and Recv between ranks of one node go through the node's communicator (inside a group too, where
 * a rank may also send to itself); between nodes they go over the peer links ({@link CrossNodeTransfers}),
 * which join the two ranks directly, so no third rank takes part.
 */
final class HierExchanges {
    private final HierRank h;
    private final HierCollectives collectives;
    private final Scratch scratch;

    /** {@code scratch} is the communicator's; its calls are serialized, so no two stages use it at once. */
    HierExchanges(HierRank h, HierCollectives collectives, Scratch scratch) {
        this.h = h;
        this.collectives = collectives;
        this.scratch = scratch;
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
        long all = exchangeBlocks(send, scratch.ensure(block * h.size * h.size), count, t, us, rs);
        rs.copyRows(recv, block, all, block * h.size, block, h.size);
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
        long padded = scratch.ensure(row * (h.size + 1L));
        long[] mine = counts[h.rank];
        for (int j = 0; j < h.size; j++) {
            if (mine[j] > 0) {
                rs.copy(padded + j * block, send + sendDispls[j] * sz, mine[j] * sz);
            }
        }
        long all = exchangeBlocks(padded, padded + row, max, t, us, rs);
        for (int i = 0; i < h.size; i++) {
            long from = counts[i][h.rank];
            if (from > 0) {
                rs.copy(recv + recvDispls[i] * sz, all + i * row, from * sz);
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
