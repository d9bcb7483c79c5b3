package io.flexlink.runtime.host;

/**
 * A host ring's calls still on the callers' streams, counted so that {@code close()} never frees memory a
 * call still uses: close waits a bounded time for them to leave, and if some are still there the last one
 * out frees instead. Every decision to free is made once, under this object's lock.
 */
final class RingCallsInFlight {
    private long calls;
    /** close() found calls still in flight: the last of them to leave frees the memory. */
    private boolean freeWhenDrained;
    private boolean freed;

    /** A call was enqueued. */
    synchronized void begin() {
        calls++;
    }

    /** A call left its stream; true when it was the last one out after a close() that had to give up. */
    synchronized boolean done() {
        calls--;
        notifyAll();
        boolean free = calls == 0 && freeWhenDrained && !freed;
        freed |= free;
        return free;
    }

    /** Waits up to {@code nanos} for every call to have left its stream; true when none is left. */
    synchronized boolean drained(long nanos) {
        long deadline = System.nanoTime() + nanos;
        try {
            for (long left = nanos; calls > 0 && left > 0; left = deadline - System.nanoTime()) {
                wait(Math.max(1, left / 1_000_000));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return calls == 0;
    }

    /** At close, after the drain: true to free now; otherwise the last call to leave frees ({@link #done}). */
    synchronized boolean freeAtClose() {
        boolean now = calls == 0 && !freed;
        freed |= now;
        freeWhenDrained = !now;
        return now;
    }

    /** Runs {@code action} unless the memory was freed, never while the decision to free is being made. */
    synchronized void unlessFreed(Runnable action) {
        if (!freed) {
            action.run();
        }
    }
}
