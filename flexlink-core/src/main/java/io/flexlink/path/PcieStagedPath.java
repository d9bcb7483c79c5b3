package io.flexlink.path;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ReduceChain;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.sync.ChunkPlan;
import io.flexlink.sync.Staging;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PCIe path: every byte goes device → pinned host slot → device, chunk by chunk, through
 * {@link Staging}. Algorithms are write-once/read-by-all: a producer copies a chunk to its slot once
 * and every consumer that needs it reads it from there (no ring through host memory), which keeps
 * the device-to-host traffic of each GPU at its minimum and the latency at one hop.
 *
 * <ul>
 *   <li>AllGather, Broadcast: producers send their chunks once to all consumers.</li>
 *   <li>ReduceScatter: each rank sends owner {@code j} its part of segment {@code j}; the owner reduces
 *       the contributions in a fixed order and is the only rank that computes those elements.</li>
 *   <li>AllReduce: ReduceScatter, then each owner sends its reduced segment to all (so every rank holds
 *       bit-identical results); Reduce: the same, to the root only.</li>
 * </ul>
 *
 * Each rank uses a send stream (device → host, waits for empty slots) and a receive stream (waits for
 * full slots, host → device copies and reductions), so both PCIe directions are busy at once.
 * Consumers read producers in the order {@code rank-1, rank-2, ...} and producers serve owners in the
 * order {@code rank+1, rank+2, ...}: chunk {@code (c, t)} is then the same position in every stream's
 * order, which rules out deadlock for any number of slots ≥ 1.
 */
public final class PcieStagedPath implements Path {
    private static final Logger LOG = LoggerFactory.getLogger(PcieStagedPath.class);

    private final Staging staging;
    private final int rank;
    private final int size;
    private final int device;
    private final RuntimeStream sendStream;
    private final RuntimeStream recvStream;
    private final RuntimeStream[] streams;
    private final Runnable onAbort;
    private final Scratch scratch;
    private final SliceGeometry geometry;
    /** Recorded on the send stream once it has read the scratch a Reduce on a non-root rank fills. */
    private final io.flexlink.runtime.RuntimeEvent scratchRead;
    private boolean scratchInUse;
    private volatile boolean closed;

    /**
     * @param onAbort releases streams blocked on this path's counters (backend-specific)
     */
    public PcieStagedPath(Backend backend, Staging staging, int rank, int size, int device, Runnable onAbort) {
        this.staging = staging;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.onAbort = onAbort;
        this.sendStream = backend.createStream(device, "pcie.send.r" + rank);
        this.recvStream = backend.createStream(device, "pcie.recv.r" + rank);
        this.streams = new RuntimeStream[] {sendStream, recvStream};
        this.scratch = new Scratch(backend, device);
        this.geometry = new SliceGeometry(size);
        this.scratchRead = backend.createEvent(device, false);
        LOG.debug("PATH pcie rank {}/{} device {}: staging {}", rank, size, device, staging.layout().describe());
    }

    @Override
    public String name() {
        return "pcie";
    }

    @Override
    public RuntimeStream[] streams() {
        return streams;
    }

    @Override
    public void enqueue(CollectiveCall call, long offset, long length) {
        geometry.dispatch(call, offset, length, algorithms);
    }

    private final SliceGeometry.Algorithms algorithms = new SliceGeometry.Algorithms() {
        @Override
        public void gather(CollectiveCall call, long producers, long offset, long length, int elementSize) {
            PcieStagedPath.this.gather(call, producers, offset, length, elementSize);
        }

        @Override
        public void scatterReduce(CollectiveCall call, long offset, long length, int elementSize) {
            PcieStagedPath.this.scatterReduce(call, offset, length, elementSize);
        }
    };

    /** The chunk plan of a range of {@code length} elements in this call. */
    private ChunkPlan plan(long length, DataType type) {
        return geometry.plan(length, type, staging.chunkElements(type));
    }

    // ---- AllGather and Broadcast: producers send once, consumers read ----

    private void gather(CollectiveCall call, long producers, long offset, long length, int sz) {
        ChunkPlan chunks = plan(length, call.type);
        long nChunks = chunks.count();
        long src = call.send + offset * sz;
        boolean producing = (producers & (1L << rank)) != 0;
        if (producing) {
            long consumers = geometry.allRanks() & ~(1L << rank);
            for (long c = 0; c < nChunks; c++) {
                staging.send(sendStream, c, src + chunks.start(c) * sz, chunks.length(c) * sz, consumers);
            }
            long own = SliceGeometry.gatherDst(call, rank, offset, sz);
            if (own != src) {
                recvStream.copy(own, src, length * sz);
            }
        }
        for (long c = 0; c < nChunks; c++) {
            long cs = chunks.start(c);
            long cl = chunks.length(c);
            for (int t = 0; t < size - 1; t++) {
                int p = Math.floorMod(rank - 1 - t, size);
                if ((producers & (1L << p)) != 0) {
                    staging.receiveCopy(recvStream, p, c, SliceGeometry.gatherDst(call, p, offset, sz) + cs * sz, cl * sz);
                }
            }
        }
        for (int p = 0; p < size; p++) {
            if ((producers & (1L << p)) != 0) {
                staging.advance(p, nChunks);
            }
        }
    }

    // ---- ReduceScatter, AllReduce, Reduce: owners reduce their segment ----

    /** Where owner {@code j} (this rank) accumulates its segment. */
    private long ownOutput(CollectiveCall call, long offset, long length, int sz) {
        if (call.collective == Collective.REDUCE_SCATTER) {
            return call.recv + offset * sz;
        }
        if (call.collective == Collective.REDUCE && rank != call.root) {
            return scratch.ensure(geometry.segmentLength(call, length) * sz);
        }
        return call.recv + (offset + geometry.segmentStart(call, length, rank)) * sz;
    }

    private void scatterReduce(CollectiveCall call, long offset, long length, int sz) {
        DataType type = call.type;
        ReduceOp op = call.op;
        int n = size;
        long nChunks = 0;
        for (int j = 0; j < n; j++) {
            nChunks = Math.max(nChunks, plan(geometry.segmentEnd(call, length, j) - geometry.segmentStart(call, length, j), type).count());
        }
        long rsItems = nChunks * (n - 1);
        // producer side: my contribution to every other owner's segment
        for (long c = 0; c < nChunks; c++) {
            for (int t = 0; t < n - 1; t++) {
                int j = (rank + 1 + t) % n;
                ChunkPlan seg = plan(geometry.segmentEnd(call, length, j) - geometry.segmentStart(call, length, j), type);
                long cs = seg.start(c);
                long cl = seg.length(c);
                staging.send(sendStream, c * (n - 1) + t, geometry.input(call, offset, length, j, sz) + cs * sz, cl * sz, 1L << j);
            }
        }
        // consumer side: reduce my segment, contributions in the order rank-1, rank-2, ...
        ChunkPlan mine = plan(geometry.segmentEnd(call, length, rank) - geometry.segmentStart(call, length, rank), type);
        long own = geometry.input(call, offset, length, rank, sz);
        long out = ownOutput(call, offset, length, sz);
        boolean usesScratch = call.collective == Collective.REDUCE && rank != call.root;
        if (usesScratch && scratchInUse) {
            // the previous Reduce's send stream may still be reading the scratch this one overwrites, and the
            // caller's stream need not have joined it (another caller stream may have issued this call)
            recvStream.waitEvent(scratchRead);
        }
        boolean distribute = n > 1 && call.collective != Collective.REDUCE_SCATTER;
        boolean toRoot = call.collective == Collective.REDUCE;
        int localBase = staging.localSignals();
        for (long c = 0; c < nChunks; c++) {
            long cs = mine.start(c);
            long cl = mine.length(c);
            long dst = out + cs * sz;
            long in = own + cs * sz;
            if (n == 1 && dst != in && cl > 0) {
                recvStream.copy(dst, in, cl * sz);
            }
            for (int t = 0; t < n - 1; t++) {
                int p = Math.floorMod(rank - 1 - t, n);
                staging.receiveReduce(recvStream, p, c * (n - 1) + t, dst, t == 0 ? in : dst, cl, type,
                        ReduceChain.op(op, type, t, n), ReduceChain.divisor(op, type, t, n));
            }
            if (distribute) {
                staging.signalLocal(recvStream);
            }
        }
        for (int p = 0; p < n; p++) {
            staging.advance(p, rsItems);
        }
        if (!distribute) {
            return;
        }
        // distribution: each owner sends its reduced segment to everyone (AllReduce) or to the root (Reduce)
        long consumers = toRoot ? 1L << call.root : geometry.allRanks() & ~(1L << rank);
        boolean sending = !toRoot || rank != call.root;
        if (sending) {
            for (long c = 0; c < nChunks; c++) {
                staging.waitLocal(sendStream, localBase + (int) c + 1);
                staging.send(sendStream, c, out + mine.start(c) * sz, mine.length(c) * sz, consumers);
            }
            if (usesScratch) {
                sendStream.record(scratchRead);
                scratchInUse = true;
            }
        }
        if (!toRoot || rank == call.root) {
            for (long c = 0; c < nChunks; c++) {
                for (int t = 0; t < n - 1; t++) {
                    int p = Math.floorMod(rank - 1 - t, n);
                    if (toRoot && p == call.root) {
                        continue;
                    }
                    long pStart = geometry.segmentStart(call, length, p);
                    ChunkPlan seg = plan(geometry.segmentEnd(call, length, p) - pStart, type);
                    long cs = seg.start(c);
                    long cl = seg.length(c);
                    staging.receiveCopy(recvStream, p, c, call.recv + (offset + pStart + cs) * sz, cl * sz);
                }
            }
        }
        for (int p = 0; p < n; p++) {
            if (!toRoot || p != call.root) {
                staging.advance(p, nChunks);
            }
        }
    }

    /** Sets the staging area's abort word (every rank sees it) and releases every wait on its counters. */
    @Override
    public void abort() {
        if (closed) {
            return;
        }
        staging.abort();
        onAbort.run();
    }

    @Override
    public FlexLinkException asyncError() {
        int by = closed ? -1 : staging.abortedBy();
        return by < 0 ? null : new FlexLinkException(Result.REMOTE_ERROR, "pcie: rank " + by
                + " aborted the communicator");
    }

    @Override
    public String describeStall() {
        return closed ? null : staging.describeStall();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sendStream.close();
        recvStream.close();
        scratch.close();
        scratchRead.close();
        staging.close();
    }
}
