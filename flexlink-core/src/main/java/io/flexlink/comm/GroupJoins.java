package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One communicator's joins inside a group: which auxiliary paths to join into which callers' streams
 * once the group ends (NCCL launches the primary calls of a group at its end, and a join enqueued before
 * that launch would make the primary collective wait for the auxiliary paths instead of running beside
 * them), the balancer's timed call whose primary end is recorded then, and the watchdog's done records.
 * Used under the communicator's lock.
 */
final class GroupJoins {
    private final RuntimeEvent[][] joins;
    private final boolean[] paths;
    private final List<RuntimeStream> streams = new ArrayList<>();
    private final Runnable task;
    /** The timed call of the current group whose primary end is recorded once the group launched it. */
    int pendingSlot = -1;
    /** The latest call of the current group, for the watchdog's report. */
    Collective collective;
    long count;

    /** @param task runs {@link #join} under the communicator's lock at the group's end */
    GroupJoins(RuntimeEvent[][] joins, Runnable task) {
        this.joins = joins;
        this.paths = new boolean[joins.length];
        this.task = task;
    }

    /** True while nothing of this group is deferred yet. */
    boolean isEmpty() {
        return streams.isEmpty();
    }

    /** Defers the join of the paths that carry elements ({@code lengths[i + 1] > 0}; null: none) into {@code stream}. */
    void defer(Groups group, RuntimeStream stream, long[] lengths) {
        if (streams.isEmpty()) {
            group.defer(task);
        }
        if (lengths != null) {
            for (int i = 0; i < paths.length; i++) {
                paths[i] |= lengths[i + 1] > 0;
            }
        }
        if (!streams.contains(stream)) {
            streams.add(stream);
        }
    }

    /** At the group's end: records the timed primary end, joins, then the watchdog's done events ({@code watch} may be null). */
    void join(CallTimer timer, CallWatch watch, long now) {
        if (pendingSlot >= 0) {
            timer.primaryDone(pendingSlot, streams.get(0));
            pendingSlot = -1;
        }
        for (RuntimeStream s : streams) {
            for (int i = 0; i < paths.length; i++) {
                if (paths[i]) {
                    for (RuntimeEvent e : joins[i]) {
                        s.waitEvent(e);
                    }
                }
            }
            if (watch != null) {
                watch.record(s, collective, count, now);
            }
        }
        streams.clear();
        Arrays.fill(paths, false);
    }
}
