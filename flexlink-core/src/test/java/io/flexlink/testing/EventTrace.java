package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A backend that traces every stream's event records and waits in the order they are enqueued (on the host backend
 * with one enqueueing thread, the order the streams will see them), so that a test can say which record each wait
 * names: the last record of the same event enqueued before the wait. Path streams are {@code pcie.*.rN}; callers'
 * streams are whatever the test names them ({@code user*}).
 */
public final class EventTrace extends ProxiedStreams {
    /** One traced operation: which stream recorded or waited for which event. */
    public record Op(String stream, boolean waits, RuntimeEvent event) {
    }

    private final List<Op> ops = new ArrayList<>();

    public EventTrace(Backend delegate) {
        super(delegate);
    }

    @Override
    protected boolean proxies(String label) {
        return true;
    }

    @Override
    protected Object answer(String label, Method m, Object[] args) {
        if (m.getName().equals("record") || m.getName().equals("waitEvent")) {
            synchronized (ops) {
                ops.add(new Op(label, m.getName().equals("waitEvent"), (RuntimeEvent) args[0]));
            }
        }
        return FORWARD;
    }

    /** The operations so far, in order. */
    public List<Op> ops() {
        synchronized (ops) {
            return List.copyOf(ops);
        }
    }

    /**
     * Where the path streams of rank {@code rank} fork: the positions in {@link #ops()} of the callers' records
     * ({@code user*}) that their waits name, ascending.
     */
    public List<Integer> forks(int rank) {
        List<Op> all = ops();
        Set<Integer> at = new TreeSet<>();
        for (int i = 0; i < all.size(); i++) {
            Op w = all.get(i);
            if (!w.waits() || !w.stream().startsWith("pcie") || !w.stream().endsWith(".r" + rank)) {
                continue;
            }
            for (int j = i - 1; j >= 0; j--) {
                Op rec = all.get(j);
                if (!rec.waits() && rec.event() == w.event()) {
                    if (rec.stream().startsWith("user")) {
                        at.add(j);
                    }
                    break;
                }
            }
        }
        return new ArrayList<>(at);
    }

    /** The positions of {@code stream}'s waits, ascending. */
    public List<Integer> waitsOf(String stream) {
        List<Op> all = ops();
        List<Integer> at = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).waits() && all.get(i).stream().equals(stream)) {
                at.add(i);
            }
        }
        return at;
    }

    /** The position of the record the wait at {@code waitAt} names (the last one of its event before it), or -1. */
    public int named(int waitAt) {
        List<Op> all = ops();
        for (int j = waitAt - 1; j >= 0; j--) {
            if (!all.get(j).waits() && all.get(j).event() == all.get(waitAt).event()) {
                return j;
            }
        }
        return -1;
    }

    /** The streams of the records at {@code positions}. */
    public Set<String> streamsAt(List<Integer> positions) {
        List<Op> all = ops();
        Set<String> streams = new TreeSet<>();
        for (int i : positions) {
            streams.add(all.get(i).stream());
        }
        return streams;
    }

    /** How many waits {@code stream} enqueued strictly between positions {@code from} and {@code to}. */
    public int waitsBetween(String stream, int from, int to) {
        List<Op> all = ops();
        int n = 0;
        for (int i = from + 1; i < to; i++) {
            if (all.get(i).waits() && all.get(i).stream().equals(stream)) {
                n++;
            }
        }
        return n;
    }
}
