package io.flexlink.cuda.bench;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A backend whose auxiliary paths' streams (labels starting {@code pcie}) time every operation enqueued on them
 * by the method's name, for {@link SplitEnqueueCost}: which operations a split call's host time is made of,
 * measured inside the real call rather than one operation alone. The proxy adds a few tenths of a µs to each.
 */
final class TimedStreams extends ForwardingBackend {
    private final Map<String, long[]> byOp = new ConcurrentHashMap<>();
    private volatile boolean on;

    TimedStreams(Backend delegate) {
        super(delegate);
    }

    /** Starts counting afresh (after warm-up). */
    void reset() {
        byOp.clear();
        on = true;
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        RuntimeStream s = super.createStream(device, label);
        if (!label.startsWith("pcie")) {
            return s;
        }
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (proxy, m, a) -> {
                    long t0 = System.nanoTime();
                    try {
                        return m.invoke(s, a);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if (on) {
                            long[] c = byOp.computeIfAbsent(m.getName(), k -> new long[2]);
                            synchronized (c) {
                                c[0]++;
                                c[1] += System.nanoTime() - t0;
                            }
                        }
                    }
                });
    }

    /** One line per operation: count and µs per call per rank, and the mean µs of one. */
    void print(long callsTimesRanks, double perRankMicros) {
        double sum = 0;
        for (Map.Entry<String, long[]> e : new TreeMap<>(byOp).entrySet()) {
            long[] c = e.getValue();
            double us = c[1] / 1e3 / callsTimesRanks;
            sum += us;
            System.out.println(String.format(Locale.ROOT, "#   %-18s %8.1f per call per rank %9.1f us %7.2f us each",
                    e.getKey(), (double) c[0] / callsTimesRanks, us, c[1] / 1e3 / c[0]));
        }
        System.out.println(String.format(Locale.ROOT, "#   %-18s %8s %28.1f us (of %.1f measured per rank)",
                "all timed", "", sum, perRankMicros));
    }

    @Override
    public void close() {
    }
}
