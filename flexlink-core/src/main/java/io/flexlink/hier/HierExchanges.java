package io.flexlink.hier;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;

/**
 * AlltoAll, Gather, Scatter and Send/Recv of a multi-node communicator, built on its AllGather and
 * Broadcast ({@link HierCollectives}) and the node's communicator. They are correct and move more than
 * the minimum: AlltoAll gathers every rank's whole send buffer ({@code n} times the bytes an exchange
 * needs, and {@code n × n × count} elements of scratch), Gather gathers to every rank, Scatter broadcasts
 * the root's whole buffer. A two-stage exchange (node, then rail) needs a rail AlltoAll, which the rails
 * do not have yet.
 *
 * <p>Send and Recv work between ranks of one node (through the node's communicator). Between nodes they
 * are refused: a rail joins only the ranks of one local index, and a transfer between other ranks would
 * need a third rank to relay it inside a call it does not make.
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

    /** Refuses, before anything is enqueued, a Send or Recv whose peer is on another node, or this rank. */
    void checkPeer(Collective c, int peer) {
        if (h.layout.nodeOf(peer) != h.node) {
            throw new FlexLinkException(Result.INVALID_USAGE, "peer: rank " + peer + " is on node "
                    + h.layout.nodeOf(peer) + ", rank " + h.rank + " on node " + h.node + "; a multi-node "
                    + "communicator's " + c.displayName() + " stays inside a node");
        }
        if (peer == h.rank) {
            // a transfer to itself is matched only inside a group, and multi-node communicators take none
            throw new FlexLinkException(Result.INVALID_USAGE, "peer: rank " + peer + " is this rank; a multi-node "
                    + "communicator's " + c.displayName() + " needs another rank of its node");
        }
    }

    void allToAll(long send, long recv, long count, DataType t, Stream us, RuntimeStream rs) {
        long block = count * t.size();
        long row = block * h.size;
        long all = scratch.ensure(row * h.size);
        collectives.allGather(send, all, count * h.size, t, us, rs);
        // row r of the gathered buffer is rank r's send buffer; its block h.rank is what r sends here
        rs.copyRows(recv, block, all + h.rank * block, row, block, h.size);
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
}
