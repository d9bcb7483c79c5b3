package io.flexlink.path;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.Scratch;
import io.flexlink.sync.Channel;
import io.flexlink.sync.ChunkPlan;
import io.flexlink.sync.Lane;
import io.flexlink.sync.Rows;

/**
 * ReduceScatter, AllReduce and Reduce of the staged paths ({@link StagedAlgorithms} says what they move, and
 * in what order). Every rank sends owner {@code j} its part of segment {@code j}, all owners' parts of a
 * chunk in one item; the owner reduces the contributions, its own first, then in ascending rank order, in
 * one operation, and then sends the reduced chunk to all (AllReduce) or to the root (Reduce).
 *
 * <p>Three lanes: the send lane stages contributions and results, the receive lane copies contributions into
 * device rows and results into the output, and the local lane reduces. A reduction on the receive lane
 * would stop its copy engine once per chunk, between two copies; on a lane of its own it overlaps the next
 * chunk's copies. The rows alternate between the channel's two sets ({@link Channel#receiveRows}): the
 * receive lane fills chunk {@code c}'s rows once chunk {@code c - 2}'s reduction has read them, and ends each
 * call behind its last reduction, so that the next call may fill either set at once. A call of one chunk has
 * nothing to overlap and reduces on the receive lane, and so does every call of a path without a local stream
 * (the local lane is then the receive lane itself, {@link StagedPath}). The contributions stay on the receive
 * lane with the results: a handshake word says FULL or FREE, not which item, so a consumer must take each
 * producer's items in order, on one lane (copying contributions on the local lane instead would let it take a
 * result's FULL for a contribution's, and a host-backend run with two slots hangs on its first call).
 */
final class StagedReduction implements AutoCloseable {
    private final int rank;
    private final int ranks;
    private final Channel channel;
    private final Lane send;
    private final Lane recv;
    private final Lane local;
    /**
     * Recorded once chunk {@code c} is reduced ({@code reduced[c & 1]}): the send lane waits on it before
     * distributing that chunk, the receive lane before filling its rows again. Two, because a wait refers to
     * an event's latest record when it is enqueued, and the waits come up to two chunks behind the records.
     */
    private final RuntimeEvent[] reduced = new RuntimeEvent[2];
    /** Recorded on the receive lane once chunk {@code c}'s rows are copied ({@code copied[c & 1]}). */
    private final RuntimeEvent[] copied = new RuntimeEvent[2];
    /** Recorded on the send lane once a non-root Reduce has sent its reduced segment out of {@link #partial}. */
    private final RuntimeEvent partialRead;
    /** A non-root rank's reduced segment of a Reduce, before it goes to the root. */
    private final Scratch partial;
    private boolean partialInUse;
    private final boolean loopback;
    private final long others;
    private final Rows rows = new Rows();
    private final Rows dst = new Rows();
    private final Results results = new Results();
    private final StagedChunks chunking;

    StagedReduction(Backend backend, int device, int rank, int ranks, Channel channel, Lane send, Lane recv,
                    Lane local, StagedChunks chunking, boolean loopback, long others) {
        this.rank = rank;
        this.ranks = ranks;
        this.channel = channel;
        this.send = send;
        this.recv = recv;
        this.local = local;
        this.chunking = chunking;
        this.loopback = loopback;
        this.others = others;
        for (int i = 0; i < 2; i++) {
            reduced[i] = backend.createEvent(device, false);
            copied[i] = backend.createEvent(device, false);
        }
        this.partialRead = backend.createEvent(device, false);
        this.partial = new Scratch(backend, device);
    }

    /** Enqueues elements {@code [offset, offset + length)} of a ReduceScatter, AllReduce or Reduce. */
    void run(CollectiveCall call, long offset, long length) {
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
        long inputBase = call.send + offset * sz;
        long inputPitch = scatter ? call.count * sz : segLen * sz;
        long inputLimit = scatter ? Long.MAX_VALUE : length * sz;
        long in = inputBase + rank * inputPitch;
        boolean distribute = n > 1 && !scatter;
        boolean sending = distribute && (!toRoot || rank != call.root);
        boolean receiving = distribute && (!toRoot || rank == call.root);
        ChunkPlan chunks = chunking.plan(segLen, channel.pieceBytes(), type, call.collective);
        int count = chunks.count();
        // rows to overlap: a lane of its own for the reductions
        Lane reducer = others != 0 && count > 1 ? local : recv;
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
                reducer.waitEvent(partialRead);
            }
        } else {
            out = call.recv + (offset + myStart) * sz;
        }
        long distConsumers = toRoot ? 1L << call.root : others;
        Results distribution = results.set(call, chunks, out, offset, segLen, myLen, length, distConsumers, sending,
                receiving);
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
            long parts = 0;
            if (others != 0) {
                if (reducer != recv && c >= 2) {
                    recv.waitEventAfterBatch(reduced[c & 1]); // chunk c - 2's reduction has read these rows
                }
                parts = channel.receiveRowsHeld(recv, contributions, others, true, mine * sz);
                if (reducer != recv) {
                    recv.record(copied[c & 1]);
                    local.waitEvent(copied[c & 1]);
                }
            }
            if (loopback) {
                reducer.reduceRows(out + cs * sz, parts, 0, 0, 0, mine, type, call.op, 1); // its own input, back
            } else {
                reducer.reduceRows(out + cs * sz, in + cs * sz, parts, channel.rowPitch(mine * sz), n - 1, mine,
                        type, call.op, n);
            }
            if (reducer != recv || sending) {
                reducer.record(reduced[c & 1]);
            }
            if (others != 0) {
                // a reduction on the receive lane reads the rows: the release goes behind it, into the next item's
                // batch; the rows of a reduction on its own lane are copies already
                channel.releaseRows(recv, contributions, others);
            }
            if (distribute && c > 0) {
                distribution.send(c - 1);
            }
        }
        if (distribute && count > 0) {
            distribution.send(count - 1);
        }
        if (reducer != recv) {
            recv.waitEvent(reduced[(count - 1) & 1]); // the call ends behind its last reduction, on every lane
        }
        if (usesPartial && sending && !capturing(call)) {
            send.record(partialRead);
            partialInUse = true;
        }
    }

    /** True while the caller's stream is being captured into a graph (checked on the rare paths that need it). */
    private static boolean capturing(CollectiveCall call) {
        return call.stream != null && call.stream.isCapturing();
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
        private boolean sending;
        private boolean receiving;

        Results set(CollectiveCall call, ChunkPlan chunks, long out, long offset, long segLen, long myLen, long length,
                    long consumers, boolean sending, boolean receiving) {
            this.call = call;
            this.chunks = chunks;
            this.out = out;
            this.offset = offset;
            this.segLen = segLen;
            this.myLen = myLen;
            this.length = length;
            this.consumers = consumers;
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
                channel.receive(recv, item, others, false,
                        dst.set(call.recv + (offset + cs) * sz, segLen * sz, cl * sz, (length - cs) * sz));
            }
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < 2; i++) {
            reduced[i].close();
            copied[i].close();
        }
        partialRead.close();
        partial.close();
    }
}
