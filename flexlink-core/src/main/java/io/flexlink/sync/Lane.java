package io.flexlink.sync;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.MemOps;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RowRuns;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * One stream of a staged path with its pending flag operations: consecutive waits and writes (a chunk's
 * releases, then the next chunk's waits) go to the stream as one batch, flushed before any other
 * operation. This is what keeps the host cost of a chunk at a few calls whatever the number of ranks.
 * Where the call allows it ({@link #batchRuns}), consecutive copies of rows (an item's runs of pieces, on either
 * side of its producer) go to the stream as one operation too ({@link RuntimeStream#copyRowRuns}), before the
 * flag operations that follow them. Used by one thread at a time (the engine serializes a communicator's enqueues).
 */
public final class Lane {
    private RuntimeStream stream;
    private final MemOps pending = new MemOps();
    /** An event to wait for after the pending batch, before the next other operation ({@link #waitEventAfterBatch}). */
    private RuntimeEvent deferred;
    /** Copies of rows not yet enqueued: added while {@link #batchRuns} holds, all before {@link #pending}. */
    private final RowRuns runs = new RowRuns();
    private boolean batchRuns;

    public Lane(RuntimeStream stream) {
        this.stream = stream;
    }

    /** Moves the lane to {@code s} (a path working on the caller's stream), flushing what is pending first. */
    public Lane bind(RuntimeStream s) {
        if (s != stream) {
            flush();
            stream = s;
        }
        return this;
    }

    public RuntimeStream stream() {
        return stream;
    }

    /**
     * Whether this call's copies of rows may be enqueued together (set by the algorithm at each call): only for a
     * call known not to be captured into a graph, whose copies {@link RuntimeStream#copyRowRuns} may batch.
     */
    public void batchRuns(boolean allowed) {
        if (!allowed) {
            flushRuns();
        }
        batchRuns = allowed;
    }

    /** Adds a wait until {@code (word & mask) != 0} to the pending batch. */
    public void waitAny(PinnedMemory memory, long offset, int mask) {
        flushRuns();
        pending.waitAny(memory, offset, mask);
    }

    /** Adds a wait until the counter at {@code offset} reaches {@code value} to the pending batch. */
    public void waitAtLeast(PinnedMemory memory, long offset, int value) {
        flushRuns();
        pending.waitAtLeast(memory, offset, value);
    }

    /** Adds a write to the pending batch. */
    public void write(PinnedMemory memory, long offset, int value) {
        flushRuns();
        pending.write(memory, offset, value);
    }

    /** The copies of rows held so far, to the stream (they come before any flag operation added after them). */
    private void flushRuns() {
        if (!runs.isEmpty()) {
            try {
                if (runs.size() == 1) {
                    runs.enqueueEach(stream);
                } else {
                    stream.copyRowRuns(runs);
                }
            } finally {
                runs.clear();
            }
        }
    }

    /**
     * Enqueues what is pending: held copies, the flag batch and the wait deferred behind it; returns the stream for
     * the next operation.
     */
    public RuntimeStream flush() {
        flushRuns();
        if (!pending.isEmpty()) {
            try {
                stream.memOps(pending);
            } finally {
                pending.clear();
            }
        }
        RuntimeEvent e = deferred;
        if (e != null) {
            deferred = null;
            stream.waitEvent(e);
        }
        return stream;
    }

    /**
     * Waits for {@code event} behind the flag batch that is pending when the lane's next other operation comes,
     * instead of now: a wait enqueued now would end the batch, and the waits and writes added after it would
     * make a batch of their own, one stream operation more. For an operation that needs the event's work and
     * the flags alike (a copy after its slot's waits); it refers to the event's latest record at that
     * operation, so the event must not be recorded again before it.
     */
    public void waitEventAfterBatch(RuntimeEvent event) {
        if (deferred != null) {
            flush();
        }
        deferred = event;
    }

    /** Forgets the held copies, pending batch and deferred wait without enqueueing them (a failed call). */
    public void discard() {
        runs.clear();
        pending.clear();
        deferred = null;
    }

    public void copy(long dst, long src, long bytes) {
        if (bytes > 0) {
            flush().copy(dst, src, bytes);
        }
    }

    public void copyRows(long dst, long dstPitch, long src, long srcPitch, long width, long rows) {
        if (width > 0 && rows > 0) {
            if (batchRuns) {
                flushBatch();
                runs.add(dst, dstPitch, src, srcPitch, width, rows);
            } else {
                flush().copyRows(dst, dstPitch, src, srcPitch, width, rows);
            }
        }
    }

    public void copyRowsFromHost(long dst, long dstPitch, PinnedMemory memory, long offset, long srcPitch,
                                 long width, long rows) {
        if (width > 0 && rows > 0) {
            if (batchRuns) {
                flushBatch();
                runs.addFromHost(dst, dstPitch, memory, offset, srcPitch, width, rows);
            } else {
                flush().copyRowsFromHost(dst, dstPitch, memory, offset, srcPitch, width, rows);
            }
        }
    }

    /**
     * Before a copy is held: a pending flag batch or deferred wait is enqueued first, behind the copies held before
     * it (they were added earlier, so they go first); with neither pending, the held copies stay held and the new
     * one joins their batch.
     */
    private void flushBatch() {
        if (!pending.isEmpty() || deferred != null) {
            flush();
        }
    }

    public void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
        if (count > 0) {
            flush().reduce(dst, a, b, count, type, op, divisor);
        }
    }

    public void reduceRows(long dst, long a, long rows, long pitch, int k, long count, DataType type, ReduceOp op,
                           int ranks) {
        if (count > 0) {
            flush().reduceRows(dst, a, rows, pitch, k, count, type, op, ranks);
        }
    }

    public void record(RuntimeEvent event) {
        flush().record(event);
    }

    public void waitEvent(RuntimeEvent event) {
        flush().waitEvent(event);
    }
}
