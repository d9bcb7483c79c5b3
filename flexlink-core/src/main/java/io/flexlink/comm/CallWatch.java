package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * What the {@link Watchdog} knows of one communicator's calls: each call records a "done" event on the
 * caller's stream after its joins, in a ring of {@link #RING} events with the time the call was
 * enqueued, and the watchdog walks the ring from the oldest call not yet seen complete. So a pipeline
 * of calls that keeps making progress is never mistaken for a stall, and the age reported is that of
 * the oldest unfinished call. Calls that ran more than {@code RING} ahead of the watchdog share slots
 * (a later record supersedes), which can only delay a report, never invent one. It also notes the time
 * a thread entered a call, so that a call stuck on the host (waiting for the peers' balancer agreement)
 * is reported too.
 *
 * <p>{@link #enter}, {@link #exit} and {@link #record} run on the calling thread under the
 * communicator's lock; {@link #overdue} runs on the watchdog's thread.
 */
final class CallWatch implements AutoCloseable {
    static final int RING = 8;

    private final long timeoutNanos;
    private final RuntimeEvent[] done = new RuntimeEvent[RING];
    private final long[] enqueuedAt = new long[RING];
    private final Collective[] what = new Collective[RING];
    private final long[] counts = new long[RING];
    private volatile long calls;
    /** Calls seen complete (watchdog thread only). */
    private long confirmed;
    private volatile long enteredAt;
    private volatile Collective entered;

    CallWatch(Backend backend, int device, long timeoutNanos) {
        this.timeoutNanos = timeoutNanos;
        for (int i = 0; i < RING; i++) {
            done[i] = backend.createEvent(device, false);
        }
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    /** A thread entered a call of {@code c} at {@code now}. */
    void enter(Collective c, long now) {
        entered = c;
        enteredAt = now == 0 ? 1 : now;
    }

    void exit() {
        enteredAt = 0;
    }

    /** Records the end of a call on {@code stream}, after everything the call enqueued there. */
    void record(RuntimeStream stream, Collective c, long count, long now) {
        long n = calls;
        int s = (int) (n % RING);
        stream.record(done[s]);
        enqueuedAt[s] = now;
        what[s] = c;
        counts[s] = count;
        calls = n + 1; // publishes the slot to the watchdog's thread
    }

    /**
     * What is overdue at {@code now}: a thread inside a call, or the oldest enqueued call not complete,
     * for longer than the timeout; null when nothing is.
     */
    String overdue(long now) {
        String inside = overdueInside(now);
        if (inside != null) {
            return inside;
        }
        long n = calls;
        if (n - confirmed > RING) {
            confirmed = n - RING;
        }
        while (confirmed < n) {
            int s = (int) (confirmed % RING);
            if (!done[s].isComplete()) {
                long age = now - enqueuedAt[s];
                return age < timeoutNanos ? null : what[s] + " of " + counts[s] + " elements (call " + (confirmed + 1)
                        + ", " + (n - confirmed) + " enqueued and unfinished) not complete " + ms(age)
                        + " ms after it was enqueued";
            }
            confirmed++;
        }
        return null;
    }

    /** A thread inside a call on the host for longer than the timeout (what it is), or null; lock-free. */
    String overdueInside(long now) {
        long in = enteredAt;
        if (in != 0 && now - in >= timeoutNanos) {
            return "the calling thread has been inside " + entered + " on the host for " + ms(now - in)
                    + " ms (waiting for the other ranks)";
        }
        return null;
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    @Override
    public void close() {
        for (RuntimeEvent e : done) {
            e.close();
        }
    }
}
