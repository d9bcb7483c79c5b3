package io.flexlink.bench;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The split each path really carried, from {@link Communicator#stats()}: bytes per path, summed over
 * ranks, between two snapshots. Between the snapshots of one row every call has the same size, so the
 * auxiliary path's fraction of the bytes is its fraction of the elements, whatever decided it (fixed
 * shares today, the balancer later).
 */
final class ShareMeter {
    private final Communicator[] comms;
    private final List<String> paths;
    private final List<String> aux;
    private long[] before;

    ShareMeter(Communicator[] comms) {
        this.comms = comms;
        List<String> names = new ArrayList<>();
        for (CommStats.PathTotals t : comms[0].stats().paths()) {
            names.add(t.path());
        }
        this.paths = Collections.unmodifiableList(names);
        List<String> a = new ArrayList<>();
        for (String p : names) {
            if (!isPrimary(p)) {
                a.add(p);
            }
        }
        this.aux = Collections.unmodifiableList(a);
        this.before = totals();
    }

    /** Path names as the communicators report them; the primary path is {@code primary} or {@code primary(off)}. */
    static boolean isPrimary(String path) {
        return path.startsWith("primary");
    }

    /** True when the communicators have a working primary path. */
    boolean hasPrimary() {
        return paths.contains("primary");
    }

    /** The auxiliary paths, in the communicators' order. */
    List<String> auxPaths() {
        return aux;
    }

    /** Starts a measurement. */
    void mark() {
        before = totals();
    }

    /**
     * The fraction of the bytes moved since {@link #mark()} that each auxiliary path carried (0 when
     * nothing moved), in {@link #auxPaths()} order.
     */
    double[] sharesSinceMark() {
        long[] now = totals();
        long all = 0;
        for (int i = 0; i < now.length; i++) {
            all += now[i] - before[i];
        }
        double[] out = new double[aux.size()];
        int k = 0;
        for (int i = 0; i < paths.size(); i++) {
            if (!isPrimary(paths.get(i))) {
                out[k++] = all == 0 ? 0 : (double) (now[i] - before[i]) / all;
            }
        }
        return out;
    }

    /** Per path and rank totals since the communicators were made. */
    List<List<CommStats.PathTotals>> perRank() {
        List<List<CommStats.PathTotals>> out = new ArrayList<>();
        for (Communicator c : comms) {
            out.add(c.stats().paths());
        }
        return out;
    }

    private long[] totals() {
        long[] t = new long[paths.size()];
        for (Communicator c : comms) {
            List<CommStats.PathTotals> p = c.stats().paths();
            for (int i = 0; i < t.length && i < p.size(); i++) {
                t[i] += p.get(i).bytes();
            }
        }
        return t;
    }
}
