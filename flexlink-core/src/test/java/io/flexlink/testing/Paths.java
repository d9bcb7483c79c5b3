package io.flexlink.testing;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import java.util.ArrayList;
import java.util.List;

/** What a communicator reports about its paths, for tests. */
public final class Paths {
    private Paths() {
    }

    /** The names of the paths in use, primary first ({@code primary(off)} when it is off), from {@code stats()}. */
    public static List<String> names(Communicator c) {
        List<String> out = new ArrayList<>();
        for (CommStats.PathTotals t : c.stats().paths()) {
            out.add(t.path());
        }
        return out;
    }

    /** Bytes each path carried so far, in the same order as {@link #names}. */
    public static long[] bytes(Communicator c) {
        List<CommStats.PathTotals> t = c.stats().paths();
        long[] out = new long[t.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = t.get(i).bytes();
        }
        return out;
    }
}
