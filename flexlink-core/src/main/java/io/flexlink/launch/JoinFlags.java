package io.flexlink.launch;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.MemOps;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.sync.Flags;

/**
 * How a caller's stream waits for auxiliary work that is enqueued later, by the enqueue thread: one
 * handshake word per call in a ring ({@link Flags}). The caller's stream waits for FULL and sets FREE; the
 * auxiliary paths' last stream, once everything of the call ran, waits for FREE (the previous call of that
 * word was consumed) and sets FULL. An event could not do it: a wait on an event refers to its latest
 * record at the time of the wait, which would not yet exist.
 */
final class JoinFlags implements AutoCloseable {
    static final int RING = 64;
    private static final int STRIDE = 64;

    private static final long CLOSE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

    private final PinnedMemory memory;
    private final MemOps callerOps = new MemOps();
    private final MemOps pathOps = new MemOps();
    /** Recorded on the caller's stream after each word's wait and release: the memory is freed only after. */
    private final io.flexlink.runtime.RuntimeEvent[] passed = new io.flexlink.runtime.RuntimeEvent[RING];
    /**
     * Recorded on the paths' last stream after each word's signal: that stream may still be waiting to write
     * (an abort released it), and a write into freed memory would corrupt the process's heap.
     */
    private final io.flexlink.runtime.RuntimeEvent[] signalled = new io.flexlink.runtime.RuntimeEvent[RING];
    private final boolean[] used = new boolean[RING];
    private final boolean[] signalUsed = new boolean[RING];
    /** Set once the words are freed (or given up on): a later release must not write into them. */
    private volatile boolean closed;

    JoinFlags(Backend backend, int device) {
        this.memory = backend.allocatePinned((long) RING * STRIDE);
        for (int j = 0; j < RING; j++) {
            memory.writeCounter((long) j * STRIDE, Flags.FREE);
            passed[j] = backend.createEvent(device, false);
            signalled[j] = backend.createEvent(device, false);
        }
    }

    /** On the caller's stream, at the end of call {@code seq}: wait until its auxiliary work is done. */
    void awaitOnCaller(RuntimeStream caller, long seq) {
        long at = offset(seq);
        callerOps.clear();
        caller.memOps(callerOps.waitAny(memory, at, Flags.FULL).write(memory, at, Flags.FREE));
        int j = (int) (seq % RING);
        caller.record(passed[j]);
        used[j] = true;
    }

    /** On the auxiliary paths' last stream (the enqueue thread): call {@code seq}'s work is done. */
    void signalFromPath(RuntimeStream last, long seq) {
        long at = offset(seq);
        pathOps.clear();
        last.memOps(pathOps.waitAny(memory, at, Flags.FREE).write(memory, at, Flags.FULL));
        int j = (int) (seq % RING);
        last.record(signalled[j]);
        signalUsed[j] = true;
    }

    private static long offset(long seq) {
        return (seq % RING) * STRIDE;
    }

    /** Releases every waiter (an abort: the data of unfinished calls is garbage); nothing once closed. */
    void releaseAll() {
        if (closed) {
            return; // a communicator's teardown runs after its abort: the words may be freed already
        }
        for (int j = 0; j < RING; j++) {
            memory.writeCounter((long) j * STRIDE, Flags.RELEASED);
        }
    }

    /**
     * Frees the words once every caller's stream has passed its last wait on them (they may still be on their
     * way there after an abort released them); a stream that does not pass within the bound keeps the memory,
     * so that a late write can never touch freed memory.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long deadline = System.nanoTime() + CLOSE_NANOS;
        for (int j = 0; j < RING; j++) {
            while ((used[j] && !passed[j].isComplete()) || (signalUsed[j] && !signalled[j].isComplete())) {
                if (System.nanoTime() - deadline > 0) {
                    org.slf4j.LoggerFactory.getLogger(JoinFlags.class).warn("COLL a stream has not "
                            + "passed its join {} s after close: the join words stay allocated", CLOSE_NANOS / 1_000_000_000L);
                    return;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
            }
        }
        for (int j = 0; j < RING; j++) {
            passed[j].close();
            signalled[j].close();
        }
        memory.close();
    }
}
