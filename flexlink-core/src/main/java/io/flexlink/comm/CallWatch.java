package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * What the {@link Watchdog} knows of one communicator's calls, and its flight recorder. Each call records
 * a "done" event on the caller's stream after its joins, in a ring of {@link CallRecord}s, each with the
 * call's sequence number, collective, size and the time it was enqueued. The watchdog walks the ring in
 * call order from the oldest call not yet seen done: a call is <em>running</em> once every earlier call
 * is done, and it is overdue only when it has been running longer than the timeout. So a deep queue of
 * calls that keep completing is never mistaken for a stall, however long the last of them waits for its
 * turn; a call's running time is counted from the round that saw its predecessor done (at most one round
 * late: that can delay a report, never invent one).
 *
 * <p>The ring holds every call not yet seen done: when more are in flight than it holds, it doubles (new
 * records and events; never on the steady-state path, where records are reused and nothing is
 * allocated), up to {@link #MAX_RING}; beyond that, later calls share the newest record (its event is
 * recorded again, so it completes with the latest of them). It also keeps the calls seen done, until
 * their records are reused: the history the flight recorder prints ({@link #flightRecord}).
 *
 * <p>It also notes the time a thread entered a call, so that a call stuck on the host (waiting for the
 * peers' balancer agreement) is reported too.
 *
 * <p>{@link #enter}, {@link #exit} and {@link #record} run on the calling thread under the communicator's
 * lock, {@link #overdue} and {@link #flightRecord} on the watchdog's thread under the same lock;
 * {@link #overdueInside} reads only volatile fields and needs no lock.
 */
final class CallWatch implements AutoCloseable {
    /** Records at first; the ring doubles while more calls than it holds are in flight. */
    static final int RING = 32;
    /** The largest ring. */
    static final int MAX_RING = 1 << 16;

    private final Backend backend;
    private final int device;
    private final long timeoutNanos;
    private CallRecord[] ring;
    /** Records ever used: the next call takes {@code ring[tail & mask]}. */
    private long tail;
    /**
     * The first record index the ring still holds: a growth keeps only the records of the old ring, so the
     * history before them is gone (and the new ring's other slots are fresh).
     */
    private long kept;
    /** Records seen done: {@code ring[head & mask]} is the oldest call not seen done, when head < tail. */
    private long head;
    /** Calls ever recorded. */
    private long calls;
    /** The stream of the newest record, and the first record of the run of records all on that stream. */
    private RuntimeStream lastStream;
    private long runStart;
    /** Records {@code [knownDoneFrom, knownDone)} are done: the newest of their stream's run completed. */
    private long knownDoneFrom;
    private long knownDone;
    /** The call at which {@link #record} last retired finished calls from a full ring. */
    private long advancedAt = Long.MIN_VALUE / 2;
    /** When the watchdog saw the latest completion; the next call runs from then (or from its enqueue). */
    private long confirmedAt = CallRecord.NOT_SEEN;
    private volatile long enteredAt;
    /** Set by close(): the events are gone, and nothing may record or query them any more. */
    private volatile boolean closed;
    private volatile Collective entered;

    CallWatch(Backend backend, int device, long timeoutNanos) {
        this.backend = backend;
        this.device = device;
        this.timeoutNanos = timeoutNanos;
        this.ring = new CallRecord[RING];
        for (int i = 0; i < RING; i++) {
            ring[i] = new CallRecord(backend.createEvent(device, false));
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

    /** {@link #record(RuntimeStream, Collective, long, DataType, long)} without the element type. */
    void record(RuntimeStream stream, Collective c, long count, long now) {
        record(stream, c, count, null, now);
    }

    /** Records the end of a call on {@code stream}, after everything the call enqueued there. */
    void record(RuntimeStream stream, Collective c, long count, DataType type, long now) {
        if (closed) {
            return;
        }
        long seq = calls;
        if (tail - head == ring.length && seq - advancedAt >= ring.length / 8) {
            // the watchdog's rounds are far apart (up to 100 ms) next to a call's host time: retire what is
            // done before growing, so that a tight loop of finished calls does not grow the ring (allocate);
            // at most every eighth of the ring's calls, so that a full ring costs no query per call
            advancedAt = seq;
            advance(now);
            if (tail - head == ring.length) {
                grow();
            }
        }
        if (tail - head == ring.length) {
            // full until the next retirement (or at the largest): the newest record covers this call too
            CallRecord newest = ring[(int) ((tail - 1) & (ring.length - 1))];
            stream.record(newest.done);
            newest.lastSeq = seq;
            calls = seq + 1;
            knownDone = Math.min(knownDone, tail - 1); // its event now stands for this call
            if (stream != lastStream) {
                lastStream = stream;
                runStart = tail - 1;
            }
            return;
        }
        CallRecord r = ring[(int) (tail & (ring.length - 1))];
        stream.record(r.done);
        r.set(seq, c, count, type, now);
        if (stream != lastStream) {
            lastStream = stream;
            runStart = tail;
        }
        tail++;
        calls = seq + 1;
    }

    /** Doubles the ring, keeping every record at its position modulo the new size; false at the largest. */
    private boolean grow() {
        int n = ring.length;
        if (n >= MAX_RING) {
            return false;
        }
        CallRecord[] bigger = new CallRecord[2 * n];
        for (long i = tail - n; i < tail; i++) {
            if (i >= 0) {
                bigger[(int) (i & (2 * n - 1))] = ring[(int) (i & (n - 1))];
            }
        }
        try {
            for (int i = 0; i < bigger.length; i++) {
                if (bigger[i] == null) {
                    bigger[i] = new CallRecord(backend.createEvent(device, false));
                }
            }
        } catch (RuntimeException e) {
            for (CallRecord r : bigger) {
                if (r != null && !contains(r)) {
                    r.done.close();
                }
            }
            return false; // no event to spare: later calls share the newest record
        }
        ring = bigger;
        kept = Math.max(kept, tail - n);
        return true;
    }

    private boolean contains(CallRecord r) {
        for (CallRecord mine : ring) {
            if (mine == r) {
                return true;
            }
        }
        return false;
    }

    /**
     * Marks done, in call order, the calls whose events completed; the oldest not done, or null. The newest
     * record is asked first: when it completed, every record of its stream's run completed before it (stream
     * order), so a run of calls on one stream is retired with one query instead of one each.
     */
    private CallRecord advance(long now) {
        if (closed) {
            return null;
        }
        // asked once: when the newest is not complete yet, the walk below does not ask it again
        boolean newestNotDone = false;
        if (head < tail && knownDone < tail) {
            if (ring[(int) ((tail - 1) & (ring.length - 1))].done.isComplete()) {
                knownDoneFrom = runStart;
                knownDone = tail;
            } else {
                newestNotDone = true;
            }
        }
        while (head < tail) {
            CallRecord r = ring[(int) (head & (ring.length - 1))];
            if (r.startedAt == CallRecord.NOT_SEEN) {
                r.startedAt = Math.max(r.enqueuedAt, confirmedAt);
            }
            boolean done = head >= knownDoneFrom && head < knownDone
                    || !(newestNotDone && head == tail - 1) && r.done.isComplete();
            if (!done) {
                return r;
            }
            r.doneAt = now;
            confirmedAt = now;
            head++;
        }
        return null;
    }

    /**
     * What is overdue at {@code now}: a thread inside a call on the host, or the running call (the oldest
     * not done), for at least the timeout; null when nothing is.
     */
    String overdue(long now) {
        String inside = overdueInside(now);
        if (inside != null) {
            return inside;
        }
        CallRecord r = advance(now);
        if (r == null) {
            return null;
        }
        long running = now - r.startedAt;
        if (running < timeoutNanos) {
            return null;
        }
        return r.collective + " of " + r.count + " elements (" + (r.type == null ? "" : r.type + ", ")
                + "call " + (r.seq + 1) + "; " + (calls - r.seq) + " enqueued and unfinished) has been running for "
                + ms(running) + " ms (enqueued " + ms(now - r.enqueuedAt) + " ms ago) and is not complete";
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

    /** Calls recorded so far. */
    long calls() {
        return calls;
    }

    /**
     * The flight recorder at {@code now}: the calls around the oldest unfinished one (up to
     * {@code before} done ones before it and {@code after} after it, then the newest), one line each, with
     * sequence number, collective, size, state and times in milliseconds before {@code now}.
     */
    String flightRecord(long now, int before, int after) {
        advance(now);
        long oldest = Math.max(kept, tail - ring.length);
        long from = Math.max(oldest, head - before);
        long to = Math.min(tail, head + 1 + after);
        StringBuilder sb = new StringBuilder();
        sb.append(calls).append(" calls recorded, ").append(calls - (head < tail ? at(head).seq : calls))
                .append(" not done; times in ms before now (started: seen running, its predecessors done)\n");
        sb.append(String.format("%8s  %-14s  %-30s  %-8s  %9s  %9s  %9s%n", "call", "collective", "size", "state",
                "enqueued", "started", "done"));
        if (from < to && at(from).seq > 0) {
            sb.append(String.format("%8s  (%d earlier calls not shown)%n", "...", at(from).seq));
        }
        for (long i = from; i < to; i++) {
            line(sb, at(i), i < head ? "done" : i == head ? "running" : "enqueued", now);
        }
        if (to < tail) {
            if (to < tail - 1) {
                sb.append(String.format("%8s  (%d more enqueued)%n", "...", at(tail - 1).seq - at(to).seq));
            }
            line(sb, at(tail - 1), "enqueued", now);
        }
        return sb.toString();
    }

    private CallRecord at(long index) {
        return ring[(int) (index & (ring.length - 1))];
    }

    private static void line(StringBuilder sb, CallRecord r, String state, long now) {
        String call = r.lastSeq == r.seq ? Long.toString(r.seq + 1) : (r.seq + 1) + "-" + (r.lastSeq + 1);
        sb.append(String.format("%8s  %-14s  %-30s  %-8s  %9s  %9s  %9s", call, r.collective, r.size(), state,
                ago(r.enqueuedAt, now), state.equals("enqueued") ? "" : ago(r.startedAt, now),
                r.doneAt == CallRecord.NOT_SEEN ? "" : ago(r.doneAt, now)).stripTrailing()).append('\n');
    }

    private static String ago(long t, long now) {
        return t == CallRecord.NOT_SEEN ? "?" : Long.toString(ms(now - t));
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true; // before the events go: a watchdog round that comes after must not ask about them
        for (CallRecord r : ring) {
            r.done.close();
        }
    }
}
