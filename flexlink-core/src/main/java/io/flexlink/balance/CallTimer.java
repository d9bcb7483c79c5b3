package io.flexlink.balance;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;

/**
 * The evaluator: per call, the completion time of each path, from timing events recorded on the caller's
 * stream (start, primary done) and on each auxiliary stream (its join). A small ring of event sets lets
 * calls run ahead; results are collected only once their events have completed, by polling, so the
 * caller never waits. A call that finds the ring full is simply not timed.
 */
public final class CallTimer implements AutoCloseable {
    static final int SLOTS = 8;

    private final Shares balancer;
    private final PathCounters counters;
    private final RuntimeEvent[] start = new RuntimeEvent[SLOTS];
    private final RuntimeEvent[] primaryDone = new RuntimeEvent[SLOTS];
    private final RuntimeEvent[][][] auxDone;
    private final boolean[][] used;
    private final int[] token = new int[SLOTS];
    private final boolean[] inFlight = new boolean[SLOTS];
    private final float[] times;
    private int next;

    /** @param streamsPerPath how many streams each auxiliary path joins back (one timing event each) */
    public CallTimer(Backend backend, int device, int[] streamsPerPath, Shares balancer, PathCounters counters) {
        this.balancer = balancer;
        this.counters = counters;
        int aux = streamsPerPath.length;
        this.auxDone = new RuntimeEvent[SLOTS][aux][];
        this.used = new boolean[SLOTS][aux + 1];
        this.times = new float[aux + 1];
        for (int s = 0; s < SLOTS; s++) {
            start[s] = backend.createEvent(device, true);
            primaryDone[s] = backend.createEvent(device, true);
            for (int i = 0; i < aux; i++) {
                int streams = streamsPerPath[i];
                auxDone[s][i] = new RuntimeEvent[streams];
                for (int k = 0; k < streams; k++) {
                    auxDone[s][i][k] = backend.createEvent(device, true);
                }
            }
        }
    }

    /** Starts timing the call of {@code callToken}: records the start on {@code stream}; -1 when no slot is free. */
    public int begin(int callToken, RuntimeStream stream) {
        poll();
        int s = next;
        if (inFlight[s]) {
            return -1;
        }
        next = (next + 1) % SLOTS;
        inFlight[s] = true;
        token[s] = callToken;
        java.util.Arrays.fill(used[s], false);
        stream.record(start[s]);
        return s;
    }

    public void primaryDone(int slot, RuntimeStream stream) {
        used[slot][0] = true;
        stream.record(primaryDone[slot]);
    }

    /**
     * Forgets timed slot {@code slot} of a call discarded before its third phase: it records no sample (its paths'
     * ends were never recorded, and a sample of nothing but NaN could push a tuner to the primary path alone).
     */
    public void cancel(int slot) {
        inFlight[slot] = false;
    }

    /** The event auxiliary path {@code i}'s stream {@code k} records as its join in timed slot {@code slot}. */
    public RuntimeEvent auxDone(int slot, int i, int k) {
        used[slot][i + 1] = true;
        return auxDone[slot][i][k];
    }

    /** Collects every timed call whose events have all completed; never blocks. */
    public void poll() {
        for (int n = 0; n < SLOTS; n++) {
            int s = (next + n) % SLOTS;
            if (!inFlight[s] || !complete(s)) {
                continue;
            }
            inFlight[s] = false;
            times[0] = used[s][0] ? primaryDone[s].elapsedMillis(start[s]) / 1e3f : Float.NaN;
            for (int i = 0; i < auxDone[s].length; i++) {
                float t = Float.NaN;
                if (used[s][i + 1]) {
                    t = 0;
                    for (RuntimeEvent e : auxDone[s][i]) {
                        t = Math.max(t, e.elapsedMillis(start[s]) / 1e3f);
                    }
                }
                times[i + 1] = t;
            }
            for (int p = 0; p < times.length; p++) {
                if (!Float.isNaN(times[p])) {
                    counters.addTime(p, times[p]);
                }
            }
            balancer.record(token[s], times);
        }
    }

    private boolean complete(int s) {
        if (!start[s].isComplete() || (used[s][0] && !primaryDone[s].isComplete())) {
            return false;
        }
        for (int i = 0; i < auxDone[s].length; i++) {
            if (used[s][i + 1]) {
                for (RuntimeEvent e : auxDone[s][i]) {
                    if (!e.isComplete()) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    @Override
    public void close() {
        for (int s = 0; s < SLOTS; s++) {
            start[s].close();
            primaryDone[s].close();
            for (RuntimeEvent[] es : auxDone[s]) {
                for (RuntimeEvent e : es) {
                    e.close();
                }
            }
        }
    }
}
