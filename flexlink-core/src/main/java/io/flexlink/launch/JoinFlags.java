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

    private final PinnedMemory memory;
    private final MemOps callerOps = new MemOps();
    private final MemOps pathOps = new MemOps();

    JoinFlags(Backend backend) {
        this.memory = backend.allocatePinned((long) RING * STRIDE);
        for (int j = 0; j < RING; j++) {
            memory.writeCounter((long) j * STRIDE, Flags.FREE);
        }
    }

    /** On the caller's stream, at the end of call {@code seq}: wait until its auxiliary work is done. */
    void awaitOnCaller(RuntimeStream caller, long seq) {
        long at = offset(seq);
        callerOps.clear();
        caller.memOps(callerOps.waitAny(memory, at, Flags.FULL).write(memory, at, Flags.FREE));
    }

    /** On the auxiliary paths' last stream (the enqueue thread): call {@code seq}'s work is done. */
    void signalFromPath(RuntimeStream last, long seq) {
        long at = offset(seq);
        pathOps.clear();
        last.memOps(pathOps.waitAny(memory, at, Flags.FREE).write(memory, at, Flags.FULL));
    }

    private static long offset(long seq) {
        return (seq % RING) * STRIDE;
    }

    /** Releases every waiter (an abort: the data of unfinished calls is garbage). */
    void releaseAll() {
        for (int j = 0; j < RING; j++) {
            memory.writeCounter((long) j * STRIDE, Flags.RELEASED);
        }
    }

    @Override
    public void close() {
        memory.close();
    }
}
