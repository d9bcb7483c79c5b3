package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.runtime.RuntimeEvent;

/**
 * One call as the watchdog's flight recorder keeps it: what it was, when it was enqueued, and when the
 * watchdog saw it start running (every earlier call done) and finish. A record is reused for a later call
 * once the watchdog saw it done, so that keeping the history allocates nothing per call. The times are
 * on the watchdog's clock (any long, as {@link System#nanoTime()}); {@link #NOT_SEEN} means not seen yet.
 */
final class CallRecord {
    static final long NOT_SEEN = Long.MIN_VALUE;

    /** Recorded on the caller's stream after everything the call enqueued there. */
    final RuntimeEvent done;
    /** The call's sequence number (from 0, per communicator). */
    long seq;
    /**
     * The last call this record stands for: equal to {@link #seq} unless more calls were in flight than
     * the ring can ever hold, when later calls share the newest record.
     */
    long lastSeq;
    Collective collective;
    long count;
    /** Null when the engine did not say. */
    DataType type;
    long enqueuedAt;
    long startedAt = NOT_SEEN;
    long doneAt = NOT_SEEN;

    CallRecord(RuntimeEvent done) {
        this.done = done;
    }

    void set(long seq, Collective collective, long count, DataType type, long enqueuedAt) {
        this.seq = seq;
        this.lastSeq = seq;
        this.collective = collective;
        this.count = count;
        this.type = type;
        this.enqueuedAt = enqueuedAt;
        this.startedAt = NOT_SEEN;
        this.doneAt = NOT_SEEN;
    }

    /** What the call moved per rank, e.g. {@code 8388608 x FLOAT32 (32 MiB)}. */
    String size() {
        if (type == null) {
            return count + " elements";
        }
        return count + " x " + type + " (" + bytes(count * (long) type.size()) + ")";
    }

    static String bytes(long b) {
        if (b >= 1L << 30 && b % (1L << 30) == 0) {
            return (b >> 30) + " GiB";
        }
        if (b >= 1L << 20) {
            return b % (1L << 20) == 0 ? (b >> 20) + " MiB" : String.format("%.1f MiB", b / (double) (1L << 20));
        }
        if (b >= 1L << 10) {
            return b % (1L << 10) == 0 ? (b >> 10) + " KiB" : String.format("%.1f KiB", b / 1024.0);
        }
        return b + " B";
    }
}
