package io.flexlink.hier;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.DataType;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Times the three stages of each hierarchical call — intra-node before the rail, the rail, intra-node
 * after it — with timing events on the caller's stream at the stage boundaries, in a ring of
 * {@link #SETS} event sets that are read only once complete (the caller never waits; a call that finds
 * the ring full is not timed). Also counts each stage's calls and bytes. A timed call's rail stage is
 * handed, once read, to the node communicator's calls that made its intra-node stages ({@link Outside}), so
 * that the node's balancer weighs its shares by the whole call. Used under the communicator's lock.
 */
final class StageTimer implements AutoCloseable {
    /** The stages, in order. */
    static final String[] NAMES = {"intra.pre", "inter", "intra.post"};
    static final int SETS = 8;

    /** Hears, per node call of a timed call, the time of that call's rail stage on this rank. */
    @FunctionalInterface
    interface Outside {
        void railTime(Collective nodeCall, long count, DataType type, float seconds);

        Outside NONE = (c, n, t, s) -> { };
    }

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
    /** Per set and intra-node stage (0: intra.pre, 1: intra.post), the node call it made, or null. */
    private final Collective[][] nodeCall = new Collective[SETS][2];
    private final long[][] nodeCount = new long[SETS][2];
    private final DataType[][] nodeType = new DataType[SETS][2];
    private final Outside outside;
    private int next;
    private int oldest;
    private int active = -1;

    StageTimer(Backend backend, int device) {
        this(backend, device, Outside.NONE);
    }

    StageTimer(Backend backend, int device, Outside outside) {
        this.outside = outside;
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
            java.util.Arrays.fill(nodeCall[active], null);
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

    /**
     * Notes that intra-node stage {@code stage} (0 or 2) of the current call was the node communicator's
     * {@code c} of {@code count} elements of {@code type}: its balancer hears the call's rail time.
     */
    void nodeCall(int stage, Collective c, long count, DataType type) {
        if (active >= 0) {
            int i = stage == 0 ? 0 : 1;
            nodeCall[active][i] = c;
            nodeCount[active][i] = count;
            nodeType[active][i] = type;
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
                    double took = set[i + 1].elapsedMillis(set[from]) / 1e3;
                    seconds[i] += took;
                    timed[i]++;
                    if (i == 1 && from == 1) { // a rail stage timed alone (not from the call's start)
                        tellNode(oldest, (float) took);
                    }
                }
            }
            pending[oldest] = false;
            oldest = (oldest + 1) % SETS;
        }
    }

    private void tellNode(int s, float railSeconds) {
        for (int i = 0; i < 2; i++) {
            if (nodeCall[s][i] != null) {
                outside.railTime(nodeCall[s][i], nodeCount[s][i], nodeType[s][i], railSeconds);
            }
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
