package io.flexlink.hier;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.bootstrap.NodeLayout;

/**
 * Where one rank sits in a hierarchical communicator: its node {@code node} of {@code nodes}, its local
 * index {@code local} of {@code localSize}, its node's communicator ({@code intra}, null on a node of one
 * rank) and its rail.
 */
final class HierRank {
    final int rank;
    final int size;
    final int node;
    final int local;
    final int nodes;
    final int localSize;
    final NodeLayout layout;
    /** Rank {@code j * localSize + l} is local index {@code l} of node {@code j}; else round-robin placement. */
    final boolean nodeMajor;
    final Communicator intra;
    final RailComm rail;
    final long minSplitBytes;
    /** An AllReduce of at least two pieces of this many bytes overlaps its stages; 0: never. */
    final long pieceBytes;

    HierRank(int rank, NodeLayout layout, Communicator intra, RailComm rail, long minSplitBytes, long pieceBytes) {
        this.rank = rank;
        this.size = layout.ranks();
        this.node = layout.nodeOf(rank);
        this.local = layout.localIndex(rank);
        this.nodes = layout.nodes();
        this.localSize = layout.ranksPerNode();
        this.layout = layout;
        this.nodeMajor = layout.nodeMajor();
        this.intra = intra;
        this.rail = rail;
        this.minSplitBytes = minSplitBytes;
        this.pieceBytes = pieceBytes;
    }

    /** The node communicator's asynchronous error, else the rail's, or null: what ends the multi-node one below it. */
    FlexLinkException asyncErrorBelow() {
        if (intra != null) {
            Result r = intra.getAsyncError();
            if (r != Result.SUCCESS) {
                return new FlexLinkException(r, "node " + node + "'s communicator failed: " + r);
            }
        }
        return rail.asyncError();
    }
}
