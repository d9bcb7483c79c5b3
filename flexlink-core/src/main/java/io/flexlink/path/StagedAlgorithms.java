package io.flexlink.path;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.Scratch;
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
 *       contributions left the device-to-host link idle for a whole chunk's round trip, every chunk).</li>
 * </ul>
 *
 * Items are numbered in the order each producer's send lane issues them (see {@link #contributionItem}
 * and {@link #resultItem}) and every consumer's receive lane takes them in the same order; an item only
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
     * Recorded on the receive lane once chunk {@code c} is reduced ({@code reduced[c & 1]}); the send lane
     * waits on it before distributing that chunk. Two, because the send lane runs one chunk behind the
     * receive lane's records: a wait refers to an event's latest record when it is enqueued.
     */
    private final RuntimeEvent[] reduced = new RuntimeEvent[2];
    /** Recorded on the send lane once a non-root Reduce has sent its reduced segment out of {@link #partial}. */
    private final RuntimeEvent partialRead;
    /** A non-root rank's reduced segment of a Reduce, before it goes to the root. */
    private final Scratch partial;
    private boolean partialInUse;
    private final boolean loopback;
    private final Rows rows = new Rows();
    private final Rows dst = new Rows();
    private final Exchanges exchanges;
    private final Results results = new Results();
    private final StagedChunks chunking;

    StagedAlgorithms(Backend backend, int device, int rank, int ranks, Channel channel, Lane send, Lane recv,
                     EnqueueBudget budget) {
        this.rank = rank;
        this.ranks = ranks;
        this.chunking = new StagedChunks(budget, ranks);
        this.channel = channel;
        this.send = send;
        this.recv = recv;
        this.reduced[0] = backend.createEvent(device, false);
        this.reduced[1] = backend.createEvent(device, false);
        this.partialRead = backend.createEvent(device, false);
        this.partial = new Scratch(backend, device);
        this.loopback = ranks == 1 && channel.loopback();
        this.exchanges = new Exchanges(rank, ranks);
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
                    scatterReduce(call, offset, length);
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
            send.flush();
            recv.flush();
        } catch (RuntimeException | Error e) {
            send.discard();
            recv.discard();
            throw e;
        }
    }

    /** True while the caller's stream is being captured into a graph (checked on the rare paths that need it). */
    private static boolean capturing(CollectiveCall call) {
        return call.stream != null && call.stream.isCapturing();
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
                recv.copy(own, src, length * sz);
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

    // ---- ReduceScatter, AllReduce, Reduce: owners reduce their segment ----

    private void scatterReduce(CollectiveCall call, long offset, long length) {
        DataType type = call.type;
        int sz = type.size();
        int n = ranks;
        boolean scatter = call.collective == Collective.REDUCE_SCATTER;
        boolean toRoot = call.collective == Collective.REDUCE;
        // owner j's segment: ReduceScatter's block j, else an aligned n-th of the range (the last ones may be
        // short or empty); every owner's chunk c starts at the same offset of its segment
        long a = StagedChunks.align(type);
        long segLen = scatter ? length : ((length + n - 1) / n + a - 1) / a * a;
        long myStart = scatter ? 0 : Math.min(length, rank * segLen);
        long myLen = scatter ? length : Math.min(segLen, length - myStart);
        long inputBase = scatter ? call.send + offset * sz : call.send + offset * sz;
        long inputPitch = scatter ? call.count * sz : segLen * sz;
        long inputLimit = scatter ? Long.MAX_VALUE : length * sz;
        long in = inputBase + rank * inputPitch;
        boolean usesPartial = toRoot && rank != call.root;
        long out;
        if (scatter) {
            out = call.recv + offset * sz;
        } else if (usesPartial) {
            out = partial.ensure(Math.max(1, segLen * sz));
            if (partialInUse && !capturing(call)) {
                // the previous Reduce's send lane may still read it, and nothing else orders the two calls here
                // (in a graph the calls are ordered through the caller's stream, and an event recorded outside
                // the capture could not be waited on inside it)
                recv.waitEvent(partialRead);
            }
        } else {
            out = call.recv + (offset + myStart) * sz;
        }
        long others = others();
        boolean distribute = n > 1 && !scatter;
        boolean sending = distribute && (!toRoot || rank != call.root);
        boolean receiving = distribute && (!toRoot || rank == call.root);
        long distConsumers = toRoot ? 1L << call.root : others;
        ChunkPlan chunks = chunking.plan(segLen, channel.pieceBytes(), type, call.collective);
        int count = chunks.count();
        Results distribution = results.set(call, chunks, out, offset, segLen, myLen, length, distConsumers, others,
                sending, receiving);
        for (int c = 0; c < count; c++) {
            long cs = chunks.start(c);
            long cl = chunks.length(c);
            int contributions = distribute ? contributionItem(c) : c;
            // my part of every other owner's chunk c, in one item
            if (others != 0) {
                long limit = inputLimit == Long.MAX_VALUE ? Long.MAX_VALUE : inputLimit - cs * sz;
                channel.send(send, contributions, rows.set(inputBase + cs * sz, inputPitch, cl * sz, limit), others);
            }
            // my chunk c: my own input, then every other rank's part in ascending rank order
            long mine = Math.max(0, Math.min(cl, myLen - cs));
            long parts = others != 0 ? channel.receiveRowsHeld(recv, contributions, others, true, mine * sz) : 0;
            if (loopback) {
                recv.reduceRows(out + cs * sz, parts, 0, 0, 0, mine, type, call.op, 1); // its own input, back
            } else {
                recv.reduceRows(out + cs * sz, in + cs * sz, parts, channel.rowPitch(mine * sz), n - 1, mine, type,
                        call.op, n);
            }
            if (distribute && sending) {
                recv.record(reduced[c & 1]);
            }
            if (others != 0) {
                channel.releaseRows(recv, contributions, others); // behind the reduction: the next item's batch
            }
            if (distribute) {
                if (c > 0) {
                    distribution.send(c - 1);
                }
            }
        }
        if (distribute && count > 0) {
            distribution.send(count - 1);
        }
        if (usesPartial && sending && !capturing(call)) {
            send.record(partialRead);
            partialInUse = true;
        }
    }

    /** Item number of chunk {@code c}'s contributions when results are distributed: 0, 1, 3, 5, ... */
    static int contributionItem(int c) {
        return c == 0 ? 0 : 2 * c - 1;
    }

    /**
     * Item number of chunk {@code c}'s reduced result, of {@code count} chunks: it follows chunk
     * {@code c + 1}'s contributions (2, 4, 6, ...), the last one follows the last contributions.
     */
    static int resultItem(int c, int count) {
        return c == count - 1 ? 2 * count - 1 : 2 * c + 2;
    }

    /**
     * The distribution of a reduction's results, one chunk at a time behind its reduction: set once per
     * call (reused, nothing allocated), then {@link #send(int)} for every chunk in ascending order.
     */
    private final class Results {
        private CollectiveCall call;
        private ChunkPlan chunks;
        private long out;
        private long offset;
        private long segLen;
        private long myLen;
        private long length;
        private long consumers;
        private long producers;
        private boolean sending;
        private boolean receiving;

        Results set(CollectiveCall call, ChunkPlan chunks, long out, long offset, long segLen, long myLen, long length,
                    long consumers, long producers, boolean sending, boolean receiving) {
            this.call = call;
            this.chunks = chunks;
            this.out = out;
            this.offset = offset;
            this.segLen = segLen;
            this.myLen = myLen;
            this.length = length;
            this.consumers = consumers;
            this.producers = producers;
            this.sending = sending;
            this.receiving = receiving;
            return this;
        }

        /** Chunk {@code c}'s reduced result from its owner to the consumers (all, or the root of a Reduce). */
        void send(int c) {
            int sz = call.type.size();
            long cs = chunks.start(c);
            long cl = chunks.length(c);
            int item = resultItem(c, chunks.count());
            if (sending) {
                send.waitEventAfterBatch(reduced[c & 1]); // behind the slot's waits: one batch, not two
                long mine = Math.max(0, Math.min(cl, myLen - cs));
                channel.send(send, item, rows.set(out + cs * sz, 0, mine * sz), consumers);
            }
            if (receiving) {
                channel.receive(recv, item, producers, false,
                        dst.set(call.recv + (offset + cs) * sz, segLen * sz, cl * sz, (length - cs) * sz));
            }
        }
    }

    // ---- AlltoAll, Gather, Scatter: blocks of one rank's buffer to the other ranks ----

    /** Every rank sends block {@code j} to rank {@code j}: one item per chunk carries a piece per consumer. */
    private void allToAll(CollectiveCall call, long offset, long length) {
        int sz = call.type.size();
        long pitch = call.count * sz;
        long own = (rank * call.count + offset) * sz;
        recv.copy(call.recv + own, call.send + own, length * sz);
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
            recv.copy(own, call.send + offset * sz, length * sz);
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
            recv.copy(call.recv + offset * sz, call.send + (root * call.count + offset) * sz, length * sz);
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
        try {
            exchanges.run(channel, ops, send, recv);
            send.flush();
            recv.flush();
        } catch (RuntimeException | Error e) {
            send.discard();
            recv.discard();
            throw e;
        }
    }

    @Override
    public void close() {
        reduced[0].close();
        reduced[1].close();
        partialRead.close();
        partial.close();
    }
}
