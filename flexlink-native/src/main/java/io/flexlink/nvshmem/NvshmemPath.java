package io.flexlink.nvshmem;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.path.SliceGeometry;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.ReduceChain;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import io.flexlink.sync.ChunkPlan;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NVSHMEM path: each slice is staged in symmetric memory and moved with
 * {@code nvshmemx_putmem_signal_on_stream}; consumers wait for the signal on their stream
 * ({@code nvshmemx_signal_wait_until_on_stream}, ≥) and copy or reduce from their symmetric receive
 * slots ({@link NvshmemChannels}). The engine forks the caller's stream into this path's two streams
 * and joins them back, as for every path.
 *
 * <ul>
 *   <li>AllGather, Broadcast: each producer stages a chunk once and puts it into every consumer's
 *       receive slot; consumers copy it to its place in their receive buffer.</li>
 *   <li>ReduceScatter: each rank puts its part of owner {@code j}'s segment to {@code j}; the owner
 *       reduces the contributions in a fixed order, the only rank that computes those elements.</li>
 *   <li>AllReduce: ReduceScatter, then each owner puts its reduced segment to every rank (bit-identical
 *       replicas); Reduce: the same, to the root only.</li>
 * </ul>
 *
 * Work is enqueued chunk by chunk: for chunk {@code c}, the sends, then the receives (and, for the
 * reductions, the reduction of c, then its distribution, then the receipt of the others' reduced c). A
 * wait is only ever for work of an earlier chunk or of an earlier step of the same chunk, on this rank
 * or a peer, and a producer's item {@code k} waits only for its consumer's release of item
 * {@code k - slots}; so the order in which every rank submits is an order of the dependencies, and
 * nothing deadlocks, even where CUDA serializes both streams on one hardware queue
 * ({@code CUDA_DEVICE_MAX_CONNECTIONS}).
 * A one-rank communicator sends its share to itself through the same slots and signals (loopback), so
 * the protocol runs, and is tested, on one GPU.
 */
public final class NvshmemPath implements Path {
    private static final Logger LOG = LoggerFactory.getLogger(NvshmemPath.class);

    private final Backend backend;
    private final NvshmemOps ops;
    private final Object lock;
    private final AutoCloseable buffer;
    private final NvshmemChannels channels;
    private final int rank;
    private final int size;
    private final SliceGeometry geometry;
    private final int device;
    private final boolean loopback;
    private final RuntimeStream sendStream;
    private final RuntimeStream recvStream;
    private final RuntimeStream[] streams;
    private final PinnedMemory reduced;
    private final Scratch scratch;
    private final RuntimeEvent scratchFree;
    private int reducedSeq;
    private boolean closed;

    /**
     * @param lock     held around every enqueue (NVSHMEM is initialized thread-serialized: the session)
     * @param buffer   the symmetric buffer {@code channels} lives in, closed with the path
     */
    NvshmemPath(Backend backend, NvshmemOps ops, Object lock, AutoCloseable buffer, NvshmemChannels channels,
                int rank, int size, int device) {
        this.backend = backend;
        this.ops = ops;
        this.lock = lock;
        this.buffer = buffer;
        this.channels = channels;
        this.rank = rank;
        this.size = size;
        this.geometry = new SliceGeometry(size);
        this.device = device;
        this.loopback = size == 1;
        // what is made before a failure is closed again, in reverse order (the caller keeps the buffer)
        List<AutoCloseable> made = new ArrayList<>(4);
        try {
            this.sendStream = made(made, backend.createStream(device, "nvshmem.send.r" + rank));
            this.recvStream = made(made, backend.createStream(device, "nvshmem.recv.r" + rank));
            this.reduced = made(made, backend.allocatePinned(64));
            this.scratch = new Scratch(backend, device); // allocates on first use only
            this.scratchFree = backend.createEvent(device, false);
        } catch (RuntimeException | Error e) {
            for (int i = made.size() - 1; i >= 0; i--) {
                try {
                    made.get(i).close();
                } catch (Exception | Error c) {
                    e.addSuppressed(c);
                }
            }
            throw e;
        }
        this.streams = new RuntimeStream[] {sendStream, recvStream};
        LOG.debug("PATH nvshmem rank {}/{} device {}: {}{}", rank, size, device, buffer,
                loopback ? ", loopback" : "");
    }

    private static <T extends AutoCloseable> T made(List<AutoCloseable> made, T resource) {
        made.add(resource);
        return resource;
    }

    @Override
    public String name() {
        return "nvshmem";
    }

    @Override
    public RuntimeStream[] streams() {
        return streams;
    }

    /** Collective, at setup: zeroes this rank's signals, then waits until every rank has (a barrier). */
    void ready() {
        synchronized (lock) {
            int previous = ops.useDevice(device);
            try {
                backend.fill(channels.signals(), NvshmemChannels.signalBytes(size, channels.slots()), (byte) 0);
                ops.barrier(sendStream);
                sendStream.synchronize();
            } finally {
                ops.restoreDevice(previous);
            }
        }
    }

    @Override
    public void enqueue(CollectiveCall call, long offset, long length) {
        synchronized (lock) {
            // the caller's thread gets its device back: FlexLink's cache of it stays true (Devices)
            int previous = ops.useDevice(device);
            try {
                geometry.dispatch(call, offset, length, algorithms);
            } finally {
                ops.restoreDevice(previous);
            }
        }
    }

    private final SliceGeometry.Algorithms algorithms = new SliceGeometry.Algorithms() {
        @Override
        public void gather(CollectiveCall call, long producers, long offset, long length, int elementSize) {
            NvshmemPath.this.gather(call, producers, offset, length, elementSize);
        }

        @Override
        public void scatterReduce(CollectiveCall call, long offset, long length, int elementSize) {
            NvshmemPath.this.scatterReduce(call, offset, length, elementSize);
        }
    };

    /** Peers in serving order for t = 0, 1, ...: rank+1, rank+2, ... (this rank itself last, with loopback). */
    private int consumer(int t) {
        return (rank + 1 + t) % size;
    }

    /** Peers in reading order: rank-1, rank-2, ... (this rank itself last, with loopback). */
    private int producer(int t) {
        return Math.floorMod(rank - 1 - t, size);
    }

    /** How many peers a rank exchanges with: the others, and itself with loopback. */
    private int peers() {
        return loopback ? size : size - 1;
    }

    private ChunkPlan plan(long length, DataType type) {
        return geometry.plan(length, type, channels.chunkElements(type));
    }

    // ---- AllGather and Broadcast ----

    private void gather(CollectiveCall call, long producers, long offset, long length, int sz) {
        ChunkPlan chunks = plan(length, call.type);
        int nChunks = chunks.count();
        long src = call.send + offset * sz;
        boolean producing = (producers & (1L << rank)) != 0;
        long own = SliceGeometry.gatherDst(call, rank, offset, sz);
        if (producing && !loopback && own != src) {
            recvStream.copy(own, src, length * sz);
        }
        for (int c = 0; c < nChunks; c++) {
            long cs = chunks.start(c);
            long bytes = chunks.length(c) * sz;
            if (producing) {
                long staged = channels.stage(sendStream, src + cs * sz, bytes);
                for (int t = 0; t < peers(); t++) {
                    channels.put(sendStream, consumer(t), staged, bytes);
                }
            }
            for (int t = 0; t < peers(); t++) {
                int p = producer(t);
                if ((producers & (1L << p)) != 0) {
                    long slot = channels.receive(recvStream, p);
                    recvStream.copy(SliceGeometry.gatherDst(call, p, offset, sz) + cs * sz, slot, bytes);
                    channels.release(recvStream, p);
                }
            }
        }
    }

    // ---- ReduceScatter, AllReduce, Reduce ----

    private ChunkPlan segment(CollectiveCall call, long length, int j) {
        long start = geometry.segmentStart(call, length, j);
        long end = call.collective == Collective.REDUCE_SCATTER ? length
                : Math.min(length, (j + 1) * geometry.segmentLength(call, length));
        return plan(end - start, call.type);
    }

    /** Where this rank, as owner, accumulates its segment. */
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
        boolean toRoot = call.collective == Collective.REDUCE;
        if (toRoot && rank != call.root) {
            // the scratch this rank reduces into may still be read by an earlier call's sends; wait for
            // them (before this call's sends, which wait on peers, are on the send stream)
            sendStream.record(scratchFree);
            recvStream.waitEvent(scratchFree);
        }
        int nChunks = 0;
        for (int j = 0; j < size; j++) {
            nChunks = Math.max(nChunks, segment(call, length, j).count());
        }
        ChunkPlan mine = segment(call, length, rank);
        long in = geometry.input(call, offset, length, rank, sz);
        long out = ownOutput(call, offset, length, sz);
        boolean distribute = size > 1 && call.collective != Collective.REDUCE_SCATTER;
        boolean sending = distribute && (!toRoot || rank != call.root);
        boolean receiving = distribute && (!toRoot || rank == call.root);
        for (int c = 0; c < nChunks; c++) {
            // my contributions to every owner's chunk c (mine too, with loopback)
            for (int t = 0; t < peers(); t++) {
                int j = consumer(t);
                ChunkPlan seg = segment(call, length, j);
                long bytes = seg.length(c) * sz;
                if (bytes > 0) {
                    long staged = channels.stage(sendStream, geometry.input(call, offset, length, j, sz) + seg.start(c) * sz,
                            bytes);
                    channels.put(sendStream, j, staged, bytes);
                }
            }
            // my chunk c, reduced from every contribution in the order rank-1, rank-2, ...
            long count = mine.length(c);
            if (count > 0) {
                reduceChunk(call, out + mine.start(c) * sz, in + mine.start(c) * sz, count);
            }
            // the reduced chunk to every rank (AllReduce) or to the root (Reduce)
            if (sending) {
                recvStream.writeValue32(reduced, 0, ++reducedSeq);
                sendStream.waitValue32(reduced, 0, reducedSeq);
                if (count > 0) {
                    long staged = channels.stage(sendStream, out + mine.start(c) * sz, count * sz);
                    for (int t = 0; t < size - 1; t++) {
                        int q = consumer(t);
                        if (!toRoot || q == call.root) {
                            channels.put(sendStream, q, staged, count * sz);
                        }
                    }
                }
            }
            if (receiving) {
                receiveReduced(call, offset, length, sz, c);
            }
        }
    }

    /** dst = in op contributions of every peer (the peers' only, from the slots, with loopback). */
    private void reduceChunk(CollectiveCall call, long dst, long in, long count) {
        int k = peers();
        if (k == 0 && dst != in) {
            recvStream.copy(dst, in, count * call.type.size());
        }
        for (int t = 0; t < k; t++) {
            int p = producer(t);
            long slot = channels.receive(recvStream, p);
            if (loopback && t == 0) {
                recvStream.copy(dst, slot, count * call.type.size());
            } else {
                int step = loopback ? t - 1 : t; // with loopback step 0 is the copy above
                recvStream.reduce(dst, !loopback && t == 0 ? in : dst, slot, count, call.type,
                        ReduceChain.op(call.op, call.type, step, size), ReduceChain.divisor(call.op, call.type, step, size));
            }
            channels.release(recvStream, p);
        }
    }

    /** Copies every other owner's reduced chunk {@code c} into place. */
    private void receiveReduced(CollectiveCall call, long offset, long length, int sz, int c) {
        for (int t = 0; t < size - 1; t++) {
            int p = producer(t);
            ChunkPlan seg = segment(call, length, p);
            long bytes = seg.length(c) * sz;
            if (bytes > 0) {
                long slot = channels.receive(recvStream, p);
                recvStream.copy(call.recv + (offset + geometry.segmentStart(call, length, p) + seg.start(c)) * sz, slot, bytes);
                channels.release(recvStream, p);
            }
        }
    }

    /** Raises every signal of this rank, so that its streams waiting on them run on (the data is garbage). */
    @Override
    public void abort() {
        try {
            backend.fill(channels.signals(), NvshmemChannels.signalBytes(size, channels.slots()), (byte) 0x3f);
            reduced.writeCounter(0, Integer.MAX_VALUE);
        } catch (RuntimeException e) {
            LOG.debug("PATH nvshmem rank {}: abort could not raise the signals: {}", rank, e.toString());
        }
    }

    /** Closes the streams (CUDA lets enqueued work finish) and retires the symmetric buffer; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        sendStream.close();
        recvStream.close();
        scratch.close();
        scratchFree.close();
        reduced.close();
        try {
            buffer.close();
        } catch (Exception e) {
            LOG.debug("PATH nvshmem rank {}: releasing the staging buffer: {}", rank, e.toString());
        }
    }
}
