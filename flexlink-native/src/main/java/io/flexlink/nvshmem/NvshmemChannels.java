package io.flexlink.nvshmem;

import io.flexlink.DataType;
import io.flexlink.runtime.RuntimeStream;

/**
 * One rank's end of the NVSHMEM path's staging, in one symmetric buffer laid out alike on every PE:
 *
 * <pre>
 *   full[p][s]   u64 signal: how many times producer p filled my receive slot (p, s)
 *   empty[q][s]  u64 signal: how many times consumer q released its receive slot (me, s)
 *   send[s]      slot: a chunk of this rank's data, the local source of puts
 *   recv[p][s]   slot: producer p's chunks for this rank
 * </pre>
 *
 * Every ordered pair of ranks (p → q) is a channel of items numbered across all calls; item {@code a}
 * uses q's slot {@code recv[p][a % slots]} as that slot's use {@code k = a / slots + 1}. The producer
 * waits for {@code empty[q][slot] ≥ k - 1} (on its own PE), then puts the data and sets
 * {@code full[p][slot] = k} on q (nvshmemx_putmem_signal_on_stream: the signal lands after the data);
 * the consumer waits for {@code full[p][slot] ≥ k}, reads, and sets {@code empty[q][slot] = k} on p.
 * One use of a slot is in flight at a time, so a signal is the count of its slot's uses: it only grows,
 * waits compare with ≥ (NVSHMEM_CMP_GE), and nothing is ever reset. Both ends count the items of a
 * channel identically because every rank makes the same calls with the same splits.
 *
 * <p>Data leaves from the symmetric send slots rather than from the caller's buffer, which NVSHMEM's
 * remote transports could not read without registering it; before a send slot is reused, the send
 * stream quiets (nvshmemx_quiet_on_stream) so that the puts that read it are complete.
 */
final class NvshmemChannels {
    private static final long ALIGN = 256;

    private final NvshmemOps ops;
    private final int rank;
    private final int ranks;
    private final int slots;
    private final long slotStride;
    private final long base;
    private final long sendOffset;
    private final long recvOffset;
    private final long[] sent;
    private final long[] received;
    private long staged;

    NvshmemChannels(NvshmemOps ops, int rank, int ranks, int slots, long chunkBytes, long base) {
        this.ops = ops;
        this.rank = rank;
        this.ranks = ranks;
        this.slots = slots;
        this.slotStride = roundUp(chunkBytes);
        this.base = base;
        this.sendOffset = signalBytes(ranks, slots);
        this.recvOffset = sendOffset + slots * slotStride;
        this.sent = new long[ranks];
        this.received = new long[ranks];
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

    /** Elements of {@code type} in one slot. */
    long chunkElements(DataType type) {
        return slotStride / type.size();
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

    /**
     * Copies {@code bytes} from {@code src} into the next send slot on {@code stream} (the send stream) and
     * returns the slot's address, the source for the {@link #put}s of this chunk.
     */
    long stage(RuntimeStream stream, long src, long bytes) {
        int slot = (int) (staged % slots);
        if (staged >= slots && slot == 0) {
            ops.quiet(stream);
        }
        staged++;
        long dst = base + sendOffset + slot * slotStride;
        stream.copy(dst, src, bytes);
        return dst;
    }

    /** Producer side, on the send stream: the next item of channel (me → consumer), from {@code staged}. */
    void put(RuntimeStream stream, int consumer, long stagedAddress, long bytes) {
        long a = sent[consumer]++;
        int slot = (int) (a % slots);
        long use = a / slots + 1;
        if (use > 1) {
            ops.waitAtLeast(stream, empty(consumer, slot), use - 1);
        }
        ops.putSignal(stream, recvSlot(rank, slot), stagedAddress, bytes, full(rank, slot), use, consumer);
    }

    /**
     * Consumer side, on the receive stream: waits for the next item of channel (producer → me) and
     * returns where it lies; {@link #release} must follow once it has been read.
     */
    long receive(RuntimeStream stream, int producer) {
        long a = received[producer];
        int slot = (int) (a % slots);
        ops.waitAtLeast(stream, full(producer, slot), a / slots + 1);
        return recvSlot(producer, slot);
    }

    /** Consumer side: gives the slot of the item {@link #receive} returned back to its producer. */
    void release(RuntimeStream stream, int producer) {
        long a = received[producer]++;
        ops.setSignal(stream, empty(rank, (int) (a % slots)), a / slots + 1, producer);
    }

    /** Address of the signal area (for zeroing and abort). */
    long signals() {
        return base;
    }

    int ranks() {
        return ranks;
    }

    int slots() {
        return slots;
    }
}
