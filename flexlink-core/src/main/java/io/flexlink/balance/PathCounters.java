package io.flexlink.balance;

import io.flexlink.CommStats;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Bytes and calls per path, and the time of the calls that were timed, counted without allocating. */
public final class PathCounters {
    private final List<String> names;
    private final long[] calls;
    private final long[] bytes;
    private final double[] seconds;
    private final long[] timedCalls;

    public PathCounters(List<String> names) {
        this.names = Collections.unmodifiableList(new ArrayList<>(names));
        this.calls = new long[names.size()];
        this.bytes = new long[names.size()];
        this.seconds = new double[names.size()];
        this.timedCalls = new long[names.size()];
    }

    public List<String> names() {
        return names;
    }

    public synchronized void add(int path, long b) {
        calls[path]++;
        bytes[path] += b;
    }

    public synchronized void addTime(int path, double s) {
        seconds[path] += s;
        timedCalls[path]++;
    }

    public synchronized List<CommStats.PathTotals> totals() {
        List<CommStats.PathTotals> out = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            out.add(new CommStats.PathTotals(names.get(i), calls[i], bytes[i], seconds[i], timedCalls[i]));
        }
        return out;
    }
}
