package io.flexlink.sync;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;

/**
 * One rank's end of a staging area: the producer/consumer protocol through pinned host slots.
 *
 * <p>Producer {@code p} numbers the chunks it sends, across all calls; chunk {@code a} goes to slot
 * {@code a % slots} as that slot's use {@code k = a / slots + 1}. The producer writes the slot, then sets
 * the slot's full counter to {@code k}; each consumer waits for full ≥ {@code k}, reads, and sets its
 * empty counter of that slot to {@code k}; before use {@code k + 1} the producer waits for empty ≥ {@code k}
 * from every consumer of use {@code k}. Counters only grow and are compared with ≥, so nothing is ever
 * reset and no reset can race. Every rank keeps the same count of chunks sent per producer (all ranks
 * make the same calls with the same splits), so a consumer computes slot and use from an item's index.
 *
 * <p>Only stream operations are used, so the same code runs on CUDA (copy engines and
 * {@code cuStreamWaitValue32}/{@code WriteValue32}) and on the host backend.
 */
public final class Staging implements AutoCloseable {
    private final StagingLayout layout;
    private final PinnedMemory memory;
    private final int rank;
    private final long[] produced;
    private final long[] lastConsumers;
    private int localSeq;

    public Staging(StagingLayout layout, PinnedMemory memory, int rank) {
        if (memory.byteSize() < layout.totalBytes()) {
            throw new IllegalArgumentException("staging memory of " + memory.byteSize() + " bytes < layout "
                    + layout.totalBytes());
        }
        this.layout = layout;
        this.memory = memory;
        this.rank = rank;
        this.produced = new long[layout.ranks()];
        this.lastConsumers = new long[layout.slots()];
        memory.setAbortWord(layout.abortOffset());
    }

    public StagingLayout layout() {
        return layout;
    }

    public PinnedMemory memory() {
        return memory;
    }

    public int rank() {
        return rank;
    }

    /** Elements of {@code type} per chunk. */
    public long chunkElements(DataType type) {
        return layout.slotBytes() / type.size();
    }

    private int slotOf(long absolute) {
        return (int) (absolute % layout.slots());
    }

    private int useOf(long absolute) {
        return (int) (absolute / layout.slots() + 1);
    }

    /**
     * Enqueues on {@code stream} the sending of this rank's chunk number {@code index} of the current
     * call: {@code bytes} bytes from {@code src} to the consumers in the bit set {@code consumers}.
     */
    public void send(RuntimeStream stream, long index, long src, long bytes, long consumers) {
        long a = produced[rank] + index;
        int slot = slotOf(a);
        int use = useOf(a);
        if (use != 1) {
            long previous = lastConsumers[slot];
            while (previous != 0) {
                int j = Long.numberOfTrailingZeros(previous);
                previous &= previous - 1;
                stream.waitValue32(memory, layout.emptyOffset(rank, slot, j), use - 1);
            }
        }
        if (bytes > 0) {
            stream.copy(memory.deviceAddress() + layout.slotOffset(rank, slot), src, bytes);
        }
        stream.writeValue32(memory, layout.fullOffset(rank, slot), use);
        lastConsumers[slot] = consumers;
    }

    /** Enqueues the receiving of producer {@code p}'s chunk {@code index} of the current call into {@code dst}. */
    public void receiveCopy(RuntimeStream stream, int p, long index, long dst, long bytes) {
        long a = produced[p] + index;
        int slot = slotOf(a);
        int use = useOf(a);
        stream.waitValue32(memory, layout.fullOffset(p, slot), use);
        if (bytes > 0) {
            stream.copyFromHost(dst, memory, layout.slotOffset(p, slot), bytes);
        }
        stream.writeValue32(memory, layout.emptyOffset(p, slot, rank), use);
    }

    /**
     * Enqueues the receiving of producer {@code p}'s chunk {@code index} reduced into {@code dst}:
     * {@code dst = a op chunk} over {@code count} elements.
     */
    public void receiveReduce(RuntimeStream stream, int p, long index, long dst, long a, long count,
                              DataType type, ReduceOp op, int divisor) {
        long abs = produced[p] + index;
        int slot = slotOf(abs);
        int use = useOf(abs);
        stream.waitValue32(memory, layout.fullOffset(p, slot), use);
        if (count > 0) {
            stream.reduceFromHost(dst, a, memory, layout.slotOffset(p, slot), count, type, op, divisor);
        }
        stream.writeValue32(memory, layout.emptyOffset(p, slot, rank), use);
    }

    /** Enqueues a signal from one of this rank's streams to another; returns the value to wait for. */
    public int signalLocal(RuntimeStream stream) {
        int v = ++localSeq;
        stream.writeValue32(memory, layout.localOffset(rank), v);
        return v;
    }

    /** The last local signal value handed out; the next {@link #signalLocal} returns this plus one. */
    public int localSignals() {
        return localSeq;
    }

    /** Enqueues a wait for this rank's local signal {@code value}. */
    public void waitLocal(RuntimeStream stream, int value) {
        stream.waitValue32(memory, layout.localOffset(rank), value);
    }

    /** Records that producer {@code p} sent {@code items} chunks in the call just enqueued. */
    public void advance(int p, long items) {
        produced[p] += items;
    }

    /** Chunks producer {@code p} has sent so far, as this rank counts them. */
    public long produced(int p) {
        return produced[p];
    }

    /**
     * Aborts the area for every rank: sets the abort word (to this rank + 1, unless a rank set it first),
     * which every rank's waits and communicators observe, then {@link #releaseAll() releases} every wait.
     * Safe from any thread; idempotent.
     */
    public void abort() {
        long at = layout.abortOffset();
        if (memory.readCounter(at) == 0) {
            memory.writeCounter(at, rank + 1);
        }
        releaseAll();
    }

    /** The rank that aborted this area ({@link #abort()}), or -1 while it is healthy; never blocks. */
    public int abortedBy() {
        return memory.readCounter(layout.abortOffset()) - 1;
    }

    /**
     * Writes every counter of the area far past any value a stream can be waiting for, from the host,
     * so that streams blocked in a wait move on (a GPU stream in {@code cuStreamWaitValue32} cannot be
     * cancelled any other way). Used when a communicator is aborted; the data is garbage afterwards.
     * Idempotent, so that every rank of an aborted communicator may call it: protocol values stay below
     * 2^30 (2^30 uses of one slot), a released counter is its value plus 2^30, and a counter already at or
     * past 2^30 is left alone (adding again would wrap past what the ≥ comparison can tell). Calling it
     * again after a late stream write lowered a counter releases that counter again.
     */
    public void releaseAll() {
        int n = layout.ranks();
        for (int p = 0; p < n; p++) {
            for (int s = 0; s < layout.slots(); s++) {
                bump(layout.fullOffset(p, s));
                for (int j = 0; j < n; j++) {
                    bump(layout.emptyOffset(p, s, j));
                }
            }
            bump(layout.localOffset(p));
        }
    }

    private void bump(long offset) {
        int c = memory.readCounter(offset);
        if (c >>> 30 == 0) {
            memory.writeCounter(offset, c + (1 << 30));
        }
    }

    /**
     * Which counters are behind what this rank has enqueued so far, for the watchdog's report: the full
     * counters of every producer (each producer numbers all its chunks, so the last use of every slot is
     * known) and the empty counters of the consumers of this rank's own last chunks. Null when nothing is
     * behind. Reads the counters without synchronization; a report, not a decision.
     */
    public String describeStall() {
        StringBuilder sb = new StringBuilder();
        int slots = layout.slots();
        for (int p = 0; p < layout.ranks(); p++) {
            StringBuilder behind = new StringBuilder();
            for (int s = 0; s < slots && s < produced[p]; s++) {
                int want = lastUse(p, s);
                int full = memory.readCounter(layout.fullOffset(p, s));
                if (full - want < 0) {
                    behind.append(behind.length() == 0 ? "" : ", ").append(s).append(": ").append(full).append('<')
                            .append(want);
                }
            }
            if (behind.length() > 0) {
                sb.append(sb.length() == 0 ? "" : "; ").append("producer rank ").append(p).append(" full [slot ")
                        .append(behind).append(']');
            }
        }
        for (int s = 0; s < slots && s < produced[rank]; s++) {
            int want = lastUse(rank, s);
            for (long c = lastConsumers[s]; c != 0; c &= c - 1) {
                int j = Long.numberOfTrailingZeros(c);
                int empty = memory.readCounter(layout.emptyOffset(rank, s, j));
                if (empty - want < 0) {
                    sb.append(sb.length() == 0 ? "" : "; ").append("consumer rank ").append(j).append(" empty [rank ")
                            .append(rank).append("'s slot ").append(s).append(": ").append(empty).append('<')
                            .append(want).append(']');
                }
            }
        }
        int local = memory.readCounter(layout.localOffset(rank));
        if (local - localSeq < 0) {
            sb.append(sb.length() == 0 ? "" : "; ").append("rank ").append(rank).append("'s local signal ")
                    .append(local).append('<').append(localSeq);
        }
        return sb.length() == 0 ? null : sb.toString();
    }

    /** The use number of the last chunk producer {@code p} sent through slot {@code s} (needs produced[p] > s). */
    private int lastUse(int p, int s) {
        return useOf(produced[p] - 1 - Math.floorMod(produced[p] - 1 - s, layout.slots()));
    }

    @Override
    public void close() {
        memory.close();
    }
}
