package io.flexlink.path;

import io.flexlink.Collective;
import io.flexlink.runtime.Backend;
import io.flexlink.sync.Channel;
import io.flexlink.sync.ChunkPlan;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.sync.Exchanges;
import io.flexlink.sync.Lane;
import io.flexlink.sync.Rows;

/**
 * The algorithms of every staged path, written once against {@link Channel}: a producer's data crosses
 * its link once and every consumer that needs it reads it from there (write once, read by all), which
 * keeps each GPU's device-to-host traffic at its minimum and the latency at one hop.
 *
 * <ul>
 *   <li>AllGather, Broadcast: producers send each chunk once to every consumer.</li>
 *   <li>ReduceScatter: every rank sends owner {@code j} its part of segment {@code j}, all owners' parts of
 *       a chunk in one item; the owner reduces the contributions, its own first, then in ascending rank
 *       order, in one operation ({@code reduceRows}): it is the only rank that computes those elements.</li>
 *   <li>AllReduce: ReduceScatter, then each owner sends its reduced chunk to all (every rank holds
 *       bit-identical results); Reduce: the same, to the root only. The send lane runs one chunk ahead:
 *       chunk {@code c + 1}'s contributions go out before chunk {@code c}'s result, so that the link is never
 *       idle while chunk {@code c} is received and reduced (sending the result right after its own
 *       contributions left the device-to-host link idle for a whole chunk's round trip, every chunk). The
 *       three are {@link StagedReduction}, whose reductions run on the local lane.</li>
 * </ul>
 *
 * Items are numbered in the order each producer's send lane issues them (see
 * {@link StagedReduction#contributionItem} and {@link StagedReduction#resultItem}) and every consumer's
 * receive lane takes them in the same order; an item only
 * ever waits for items of lower numbers, on this rank or a peer, so nothing deadlocks whatever the number
 * of slots. One instance per path, reused call after call without allocating; used under the
 * communicator's lock.
 */
final class StagedAlgorithms implements AutoCloseable {
    private final int rank;
    private final int ranks;
    private final Channel channel;
    private final Lane send;
    private final Lane recv;
    /**
     * The work that stays on the device: reductions and the rank's own block, off the receive lane's copies; the
     * receive lane itself where the path has no local stream.
     */
    private final Lane local;
    private final boolean loopback;
    private final Rows rows = new Rows();
    private final Rows dst = new Rows();
    private final Exchanges exchanges;
    private final StagedChunks chunking;
    private final StagedReduction reduction;

    StagedAlgorithms(Backend backend, int device, int rank, int ranks, Channel channel, Lane send, Lane recv,
                     Lane local, EnqueueBudget budget) {
        this.rank = rank;
        this.ranks = ranks;
        this.chunking = new StagedChunks(budget, ranks);
        this.channel = channel;
        this.send = send;
        this.recv = recv;
        this.local = local;
        this.loopback = ranks == 1 && channel.loopback();
        this.exchanges = new Exchanges(rank, ranks);
        this.reduction = new StagedReduction(backend, device, rank, ranks, channel, send, recv, local, chunking,
                loopback, others());
    }

    private long allRanks() {
        return ranks == 64 ? -1L : (1L << ranks) - 1;
    }

    /** The ranks this rank exchanges with: the others, or itself on a loopback channel of one rank. */
    private long others() {
        return loopback ? 1L << rank : allRanks() & ~(1L << rank);
    }

    /** Enqueues elements {@code [offset, offset + length)} of {@code call}. */
    void run(CollectiveCall call, long offset, long length) {
        batchRuns(call.uncaptured);
        if (call.gate != null) {
            // held until the group is enqueued: the first wait of each lane's first batch
            send.waitAtLeast(call.gate, 0, call.gateValue);
            recv.waitAtLeast(call.gate, 0, call.gateValue);
            if (local != recv) {
                local.waitAtLeast(call.gate, 0, call.gateValue);
            }
        }
        try {
            switch (call.collective) {
                case ALL_GATHER:
                    gather(call, allRanks(), offset, length);
                    break;
                case BROADCAST:
                    gather(call, 1L << call.root, offset, length);
                    break;
                case ALL_REDUCE:
                case REDUCE_SCATTER:
                case REDUCE:
                    reduction.run(call, offset, length);
                    break;
                case ALL_TO_ALL:
                    allToAll(call, offset, length);
                    break;
                case GATHER:
                    gatherToRoot(call, offset, length);
                    break;
                case SCATTER:
                    scatterFromRoot(call, offset, length);
                    break;
                default:
                    throw new IllegalStateException("staged path: " + call.collective);
            }
            flushAll();
        } catch (RuntimeException | Error e) {
            discardAll();
            throw e;
        }
    }

    /** Whether the lanes may hold this call's copies of rows and enqueue them together ({@link Lane#batchRuns}). */
    private void batchRuns(boolean allowed) {
        send.batchRuns(allowed);
        recv.batchRuns(allowed);
        local.batchRuns(allowed);
    }

    private void flushAll() {
        send.flush();
        recv.flush();
        local.flush();
    }

    /** Forgets what the lanes hold pending (a failed call: nothing of it may run). */
    private void discardAll() {
        send.discard();
        recv.discard();
        local.discard();
    }

    // ---- AllGather and Broadcast: producers send once, consumers read ----

    private void gather(CollectiveCall call, long producers, long offset, long length) {
        int sz = call.type.size();
        ChunkPlan chunks = chunking.plan(length, channel.slotBytes(), call.type, call.collective);
        long src = call.send + offset * sz;
        boolean producing = (producers >>> rank & 1) != 0;
        long fromOthers = loopback ? producers : producers & ~(1L << rank);
        long consumers = others();
        // AllGather: producer p's range goes to its block; Broadcast: the root's range to the same place
        long blockPitch = call.collective == Collective.ALL_GATHER ? call.count * sz : 0;
        if (producing && !loopback) {
            long own = call.recv + (rank * blockPitch / sz + offset) * sz;
            if (own != src) {
                local.copy(own, src, length * sz);
            }
        }
        for (int c = 0; c < chunks.count(); c++) {
            long cs = chunks.start(c);
            long bytes = chunks.length(c) * sz;
            if (producing && consumers != 0) {
                channel.send(send, c, rows.set(src + cs * sz, 0, bytes), consumers);
            }
            if (fromOthers != 0) {
                channel.receive(recv, c, fromOthers, false, dst.set(call.recv + (offset + cs) * sz, blockPitch, bytes));
            }
        }
    }

    // ---- AlltoAll, Gather, Scatter: blocks of one rank's buffer to the other ranks ----

    /** Every rank sends block {@code j} to rank {@code j}: one item per chunk carries a piece per consumer. */
    private void allToAll(CollectiveCall call, long offset, long length) {
        int sz = call.type.size();
        long pitch = call.count * sz;
        long own = (rank * call.count + offset) * sz;
        local.copy(call.recv + own, call.send + own, length * sz);
        long others = allRanks() & ~(1L << rank);
        if (others == 0) {
            return;
        }
        ChunkPlan chunks = chunking.plan(length, channel.pieceBytes(), call.type, call.collective);
        for (int c = 0; c < chunks.count(); c++) {
            long at = (offset + chunks.start(c)) * sz;
            long bytes = chunks.length(c) * sz;
            channel.send(send, c, rows.set(call.send + at, pitch, bytes), others);
            channel.receive(recv, c, others, true, dst.set(call.recv + at, pitch, bytes));
        }
    }

    /** Every rank's range to its block of the root's buffer. */
    private void gatherToRoot(CollectiveCall call, long offset, long length) {
        int sz = call.type.size();
        int root = call.root;
        long others = allRanks() & ~(1L << root);
        if (rank == root) {
            long own = call.recv + (root * call.count + offset) * sz;
            local.copy(own, call.send + offset * sz, length * sz);
        }
        if (others == 0) {
            return;
        }
        ChunkPlan chunks = chunking.plan(length, channel.slotBytes(), call.type, call.collective);
        for (int c = 0; c < chunks.count(); c++) {
            long at = (offset + chunks.start(c)) * sz;
            long bytes = chunks.length(c) * sz;
            if (rank != root) {
                channel.send(send, c, rows.set(call.send + at, 0, bytes), 1L << root);
            } else {
                channel.receive(recv, c, others, false, dst.set(call.recv + at, call.count * sz, bytes));
            }
        }
    }

    /** Block {@code r} of the root's buffer to rank {@code r}: one item per chunk carries every rank's piece. */
    private void scatterFromRoot(CollectiveCall call, long offset, long length) {
        int sz = call.type.size();
        int root = call.root;
        long others = allRanks() & ~(1L << root);
        if (rank == root) {
            local.copy(call.recv + offset * sz, call.send + (root * call.count + offset) * sz, length * sz);
        }
        if (others == 0) {
            return;
        }
        ChunkPlan chunks = chunking.plan(length, channel.pieceBytes(), call.type, call.collective);
        for (int c = 0; c < chunks.count(); c++) {
            long at = (offset + chunks.start(c)) * sz;
            long bytes = chunks.length(c) * sz;
            if (rank == root) {
                channel.send(send, c, rows.set(call.send + at, call.count * sz, bytes), others);
            } else {
                channel.receive(recv, c, 1L << root, true, dst.set(call.recv + at, 0, bytes));
            }
        }
    }

    /** A group's sends and receives ({@link Exchanges}), sends on the send lane, receives on the receive lane. */
    void exchange(io.flexlink.runtime.PeerOps ops) {
        batchRuns(false); // whether the transfers' stream is being captured is not asked here
        try {
            exchanges.run(channel, ops, send, recv);
            flushAll();
        } catch (RuntimeException | Error e) {
            discardAll();
            throw e;
        }
    }

    @Override
    public void close() {
        reduction.close();
    }
}
