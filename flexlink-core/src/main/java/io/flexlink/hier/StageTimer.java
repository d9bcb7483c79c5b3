package io.flexlink.hier;

import io.flexlink.CommStats;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Times the three stages of each hierarchical call — intra-node before the rail, the rail, intra-node
 * after it — with timing events on the caller's stream at the stage boundaries, in a ring of
 * {@link #SETS} event sets that are read only once complete (the caller never waits; a call that finds
 * the ring full is not timed). Also counts each stage's calls and bytes. Used under the communicator's
 * lock.
 */
final class StageTimer implements AutoCloseable {
    /** The stages, in order. */
    static final String[] NAMES = {"intra.pre", "inter", "intra.post"};
    static final int SETS = 8;

    private final RuntimeEvent[][] events = new RuntimeEvent[SETS][NAMES.length + 1];
    private final boolean[] pending = new boolean[SETS];
    /** Per set, which stages did something on this rank (a stage that did nothing is not timed). */
    private final boolean[][] ran = new boolean[SETS][NAMES.length];
    /**
     * Per set, which boundaries the call recorded: an algorithm whose stages overlap (the pipelined
     * AllReduce) records only the last, and a stage is timed from the latest boundary recorded before it.
     */
    private final boolean[][] marked = new boolean[SETS][NAMES.length + 1];
    private final long[] calls = new long[NAMES.length];
    private final long[] bytes = new long[NAMES.length];
    private final double[] seconds = new double[NAMES.length];
    private final long[] timed = new long[NAMES.length];
    /** Bytes of the call being enqueued, per stage; -1: the stage does nothing on this rank. */
    private final long[] current = new long[NAMES.length];
    private int next;
    private int oldest;
    private int active = -1;

    StageTimer(Backend backend, int device) {
        for (RuntimeEvent[] set : events) {
            for (int i = 0; i < set.length; i++) {
                set[i] = backend.createEvent(device, true);
            }
        }
    }

    /** Starts a call on {@code stream}: records its first boundary when a set is free. */
    void begin(RuntimeStream stream) {
        harvest();
        java.util.Arrays.fill(current, -1);
        active = pending[next] ? -1 : next;
        if (active >= 0) {
            java.util.Arrays.fill(marked[active], false);
            stream.record(events[active][0]);
            marked[active][0] = true;
        }
    }

    /** Ends stage {@code stage} of the current call, which carried {@code stageBytes} (-1: nothing here). */
    void stage(RuntimeStream stream, int stage, long stageBytes) {
        current[stage] = stageBytes;
        if (active >= 0) {
            stream.record(events[active][stage + 1]);
            marked[active][stage + 1] = true;
        }
    }

    /** Ends the call. */
    void end() {
        for (int i = 0; i < NAMES.length; i++) {
            if (current[i] >= 0) {
                calls[i]++;
                bytes[i] += current[i];
            }
        }
        if (active >= 0) {
            for (int i = 0; i < NAMES.length; i++) {
                ran[active][i] = current[i] >= 0;
            }
            pending[active] = true;
            next = (active + 1) % SETS;
        }
        active = -1;
    }

    /** Reads the sets whose calls completed, oldest first. */
    private void harvest() {
        while (pending[oldest] && events[oldest][lastMarked(oldest)].isComplete()) {
            RuntimeEvent[] set = events[oldest];
            for (int i = 0; i < NAMES.length; i++) {
                if (ran[oldest][i]) {
                    int from = i;
                    while (!marked[oldest][from]) {
                        from--; // boundary 0 is always marked
                    }
                    seconds[i] += set[i + 1].elapsedMillis(set[from]) / 1e3;
                    timed[i]++;
                }
            }
            pending[oldest] = false;
            oldest = (oldest + 1) % SETS;
        }
    }

    /** The last boundary set {@code s}'s call recorded: it completes last (the others are ordered before it). */
    private int lastMarked(int s) {
        int k = NAMES.length;
        while (!marked[s][k]) {
            k--;
        }
        return k;
    }

    /** The stages' totals (after reading what completed). */
    List<CommStats.PathTotals> totals() {
        harvest();
        List<CommStats.PathTotals> out = new ArrayList<>();
        for (int i = 0; i < NAMES.length; i++) {
            out.add(new CommStats.PathTotals(NAMES[i], calls[i], bytes[i], seconds[i], timed[i]));
        }
        return out;
    }

    @Override
    public void close() {
        for (RuntimeEvent[] set : events) {
            for (RuntimeEvent e : set) {
                e.close();
            }
        }
    }
}
