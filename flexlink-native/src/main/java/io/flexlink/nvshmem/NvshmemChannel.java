package io.flexlink.nvshmem;

import io.flexlink.runtime.AlternatingScratch;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.sync.Channel;
import io.flexlink.sync.Lane;
import io.flexlink.sync.Rows;

/**
 * The NVSHMEM path's channel: one rank's end of its staging, in one symmetric buffer laid out alike on
 * every PE:
 *
 * <pre>
 *   full[p][s]   u64 signal: how many times producer p filled my receive slot (p, s)
 *   empty[q][s]  u64 signal: how many times consumer q released its receive slot (me, s)
 *   send[s]      slot: a piece of this rank's data, the local source of puts
 *   recv[p][s]   slot: producer p's pieces for this rank
 * </pre>
 *
 * Every ordered pair of ranks (p → q) is a channel of pieces numbered across all calls; piece {@code a}
 * uses q's slot {@code recv[p][a % slots]} as that slot's use {@code k = a / slots + 1}. The producer
 * waits for {@code empty[q][slot] ≥ k - 1} (on its own PE), then puts the data and sets
 * {@code full[p][slot] = k} on q (nvshmemx_putmem_signal_on_stream: the signal lands after the data);
 * the consumer waits for {@code full[p][slot] ≥ k}, reads, and sets {@code empty[q][slot] = k} on p.
 * A signal counts its slot's uses, so it only grows and nothing is ever reset; that also means a call
 * captured into a CUDA graph would replay stale values, so this channel is not {@link #capturable()}.
 * Both ends count a pair's pieces identically: every rank makes the same calls with the same splits, and a
 * piece of no bytes is skipped on both ends. Producers serve consumers in the order rank+1, rank+2, ...
 * and consumers read producers in the order rank-1, rank-2, ..., which keeps the order in which every rank
 * submits an order of the dependencies even where CUDA serializes both streams on one hardware queue.
 *
 * <p>Data leaves from the symmetric send slots rather than from the caller's buffer, which NVSHMEM's remote
 * transports could not read without registering it; before a send slot is reused, the send stream quiets
 * (nvshmemx_quiet_on_stream) so that the puts that read it are complete. A one-rank communicator sends to
 * itself through the same slots and signals ({@link #loopback()}), so the protocol runs on one GPU too.
 * Every NVSHMEM call is made holding the session's lock (NVSHMEM is initialized thread-serialized).
 */
final class NvshmemChannel implements Channel {
    private static final long ALIGN = 256;

    private final Backend backend;
    private final NvshmemOps ops;
    private final Object lock;
    private final AutoCloseable buffer;
    private final int device;
    private final int rank;
    private final int ranks;
    private final int slots;
    private final long slotStride;
    private final long base;
    private final long sendOffset;
    private final long recvOffset;
    private final long[] sent;
    private final long[] received;
    private final AlternatingScratch rows;
    private long staged;
    private int previousDevice = -1;

    /** {@code alternateRows}: whether the rows are read on another stream than the one that fills them. */
    NvshmemChannel(Backend backend, NvshmemOps ops, Object lock, AutoCloseable buffer, int device, int rank,
                   int ranks, int slots, long chunkBytes, long base, boolean alternateRows) {
        this.backend = backend;
        this.ops = ops;
        this.lock = lock;
        this.buffer = buffer;
        this.device = device;
        this.rank = rank;
        this.ranks = ranks;
        this.slots = slots;
        this.slotStride = roundUp(chunkBytes);
        this.base = base;
        this.sendOffset = signalBytes(ranks, slots);
        this.recvOffset = sendOffset + slots * slotStride;
        this.sent = new long[ranks];
        this.received = new long[ranks];
        this.rows = new AlternatingScratch(backend, device, alternateRows);
    }

    private static long roundUp(long v) {
        return (Math.max(v, 1) + ALIGN - 1) / ALIGN * ALIGN;
    }

    /** Bytes of the signal area (zeroed at setup, raised by abort). */
    static long signalBytes(int ranks, int slots) {
        return roundUp(2L * ranks * slots * Long.BYTES);
    }

    /** Bytes of the whole symmetric buffer. */
    static long totalBytes(int ranks, int slots, long chunkBytes) {
        return signalBytes(ranks, slots) + (long) (ranks + 1) * slots * roundUp(chunkBytes);
    }

    @Override
    public long slotBytes() {
        return slotStride;
    }

    /** Every piece goes to its consumer's own receive slot: a piece may fill a whole slot. */
    @Override
    public long pieceBytes() {
        return slotStride;
    }

    @Override
    public boolean loopback() {
        return ranks == 1;
    }

    @Override
    public void begin() {
        previousDevice = ops.useDevice(device); // the caller's thread gets its device back in end()
    }

    @Override
    public void end() {
        ops.restoreDevice(previousDevice);
        previousDevice = -1;
    }

    private long full(int producer, int slot) {
        return base + ((long) producer * slots + slot) * Long.BYTES;
    }

    private long empty(int consumer, int slot) {
        return base + ((long) ranks * slots + (long) consumer * slots + slot) * Long.BYTES;
    }

    private long recvSlot(int producer, int slot) {
        return base + recvOffset + ((long) producer * slots + slot) * slotStride;
    }

    /** Peer {@code t} in serving order: rank+1, rank+2, ... (this rank itself with loopback). */
    private int consumer(int t) {
        return (rank + 1 + t) % ranks;
    }

    /** Peer {@code t} in reading order: rank-1, rank-2, ... (this rank itself with loopback). */
    private int producer(int t) {
        return Math.floorMod(rank - 1 - t, ranks);
    }

    @Override
    public void send(Lane lane, int item, Rows src, long consumers) {
        long stagedShared = -1;
        for (int t = 0; t < ranks; t++) {
            int q = consumer(t);
            if ((consumers >>> q & 1) == 0) {
                continue;
            }
            long bytes = src.bytes(q);
            if (bytes == 0) {
                continue; // the consumer computes the same size and skips it too
            }
            long from;
            if (src.shared()) {
                if (stagedShared < 0) {
                    stagedShared = stage(lane, src.address(0), bytes);
                }
                from = stagedShared;
            } else {
                from = stage(lane, src.address(q), bytes);
            }
            put(lane.flush(), q, from, bytes);
        }
    }

    /** Copies {@code bytes} into the next send slot and returns its address, the source of the puts. */
    private long stage(Lane lane, long src, long bytes) {
        int slot = (int) (staged % slots);
        RuntimeStream s = lane.flush();
        if (staged >= slots && slot == 0) {
            synchronized (lock) {
                ops.quiet(s);
            }
        }
        staged++;
        long dst = base + sendOffset + slot * slotStride;
        s.copy(dst, src, bytes);
        return dst;
    }

    /** The next piece of channel (me → consumer). */
    private void put(RuntimeStream stream, int consumer, long from, long bytes) {
        long a = sent[consumer]++;
        int slot = (int) (a % slots);
        long use = a / slots + 1;
        synchronized (lock) {
            if (use > 1) {
                ops.waitAtLeast(stream, empty(consumer, slot), use - 1);
            }
            ops.putSignal(stream, recvSlot(rank, slot), from, bytes, full(rank, slot), use, consumer);
        }
    }

    /** Waits for the next piece of channel (producer → me) and returns where it lies; {@link #release} follows. */
    private long arrived(RuntimeStream stream, int producer) {
        long a = received[producer];
        int slot = (int) (a % slots);
        synchronized (lock) {
            ops.waitAtLeast(stream, full(producer, slot), a / slots + 1);
        }
        return recvSlot(producer, slot);
    }

    private void release(RuntimeStream stream, int producer) {
        long a = received[producer]++;
        synchronized (lock) {
            ops.setSignal(stream, empty(rank, (int) (a % slots)), a / slots + 1, producer);
        }
    }

    @Override
    public void receive(Lane lane, int item, long producers, boolean pieces, Rows dst) {
        for (int t = 0; t < ranks; t++) {
            int p = producer(t);
            long bytes = (producers >>> p & 1) != 0 ? dst.bytes(p) : 0;
            if (bytes == 0) {
                continue;
            }
            RuntimeStream s = lane.flush();
            long slot = arrived(s, p);
            s.copy(dst.address(p), slot, bytes);
            release(s, p);
        }
    }

    @Override
    public long receiveRows(Lane lane, int item, long producers, boolean pieces, long bytes) {
        long pitch = rowPitch(bytes);
        long out = rows.next(Math.max(1, Long.bitCount(producers)) * pitch);
        if (bytes == 0) {
            return out;
        }
        for (int t = 0; t < ranks; t++) {
            int p = producer(t);
            if ((producers >>> p & 1) == 0) {
                continue;
            }
            int row = Long.bitCount(producers & ((1L << p) - 1)); // rows in ascending producer order
            RuntimeStream s = lane.flush();
            long slot = arrived(s, p);
            s.copy(out + row * pitch, slot, bytes);
            release(s, p);
        }
        return out;
    }

    @Override
    public long rowPitch(long bytes) {
        return roundUp(bytes);
    }

    /** Collective, at setup: zeroes this rank's signals, then waits until every rank has (a barrier). */
    void ready() {
        int previous = ops.useDevice(device);
        RuntimeStream s = backend.createStream(device, "nvshmem.setup.r" + rank);
        try {
            backend.fill(base, signalBytes(ranks, slots), (byte) 0);
            synchronized (lock) {
                ops.barrier(s);
            }
            s.synchronize();
        } finally {
            s.close();
            ops.restoreDevice(previous);
        }
    }

    /** Raises every signal of this rank, so that its streams waiting on them run on (the data is garbage). */
    @Override
    public void abort() {
        releaseAll();
    }

    @Override
    public void releaseAll() {
        try {
            backend.fill(base, signalBytes(ranks, slots), (byte) 0x3f);
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(NvshmemChannel.class)
                    .debug("PATH nvshmem rank {}: abort could not raise the signals: {}", rank, e.toString());
        }
    }

    /** A peer's abort reaches this rank through the raised signals and the communicator's other paths. */
    @Override
    public int abortedBy() {
        return -1;
    }

    @Override
    public String describeStall() {
        return null;
    }

    /** Frees the row scratch and retires the symmetric buffer; the path closed its streams first. */
    @Override
    public void close() {
        rows.close();
        try {
            buffer.close();
        } catch (Exception e) {
            org.slf4j.LoggerFactory.getLogger(NvshmemChannel.class)
                    .debug("PATH nvshmem rank {}: releasing the staging buffer: {}", rank, e.toString());
        }
    }
}
