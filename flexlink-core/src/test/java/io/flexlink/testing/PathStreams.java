package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * A backend whose auxiliary paths' streams (labels starting {@code pcie}) are proxies, for the host-cost probes:
 * they count each method called on them ({@link Mode#COUNT}), also time it ({@link Mode#TIME}), or drop every
 * enqueued operation so that only the engine's own work is left ({@link Mode#DROP}: queries, {@code close} and
 * {@code synchronize} go to the real stream; nothing is counted, so nothing is added to the time).
 */
public final class PathStreams extends ForwardingBackend {
    /** What the proxies do. */
    public enum Mode { COUNT, TIME, DROP }

    /** Methods that enqueue nothing: queries and the stream's own end. */
    private static final Set<String> NOT_OPERATIONS = Set.of("label", "device", "failure", "pollForDomain", "knownFailure",
            "faultDomain", "close", "synchronize", "isCapturing", "isIdle", "toString", "hashCode", "equals");

    private final Mode mode;
    /** Per method: calls, nanoseconds (TIME only). */
    private final Map<String, long[]> byMethod = new ConcurrentHashMap<>();
    /** Told of every counted call ({@link #listen}); none by default. */
    private volatile Listener listener = (label, method, args) -> { };
    /** Which threads' calls count ({@link #countOnly}). */
    private volatile Predicate<Thread> counted = t -> true;

    public PathStreams(Backend delegate, Mode mode) {
        super(delegate);
        this.mode = mode;
    }

    /** Forgets what was counted so far (the calls that set things up). */
    public void reset() {
        byMethod.clear();
    }

    /**
     * Counts from now on only the calls made on threads that {@code threads} accepts (every thread's before).
     * A host-cost probe leaves out threads that are not the call's (the watchdog's queries on the same streams);
     * it must keep the communicators' enqueue threads, which enqueue the auxiliary paths' work.
     */
    public void countOnly(Predicate<Thread> threads) {
        counted = threads;
    }

    /** What {@link #listen} passes each counted call to. */
    public interface Listener {
        /** {@code method} of {@link RuntimeStream} called with {@code args} on the path stream {@code label}. */
        void called(String label, Method method, Object[] args);
    }

    /**
     * Tells {@code listener} of every call this backend counts from now on, before it reaches the stream, in the
     * order of the calls ({@code StreamOpTrace} prints them).
     */
    public void listen(Listener listener) {
        this.listener = listener;
    }

    /** Whether {@code method} of {@link RuntimeStream} enqueues an operation (one CUDA call on CUDA). */
    public static boolean isOperation(String method) {
        return !NOT_OPERATIONS.contains(method);
    }

    /** Per method name, sorted: {calls, nanoseconds}. */
    public Map<String, long[]> byMethod() {
        Map<String, long[]> out = new TreeMap<>();
        byMethod.forEach((k, v) -> out.put(k, v.clone()));
        return out;
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        RuntimeStream s = super.createStream(device, label);
        return label.startsWith("pcie") ? proxy(s) : s;
    }

    private RuntimeStream proxy(RuntimeStream s) {
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (p, m, a) -> {
                    String name = m.getName();
                    if (mode == Mode.DROP) {
                        return m.getReturnType() == void.class && !name.equals("close") && !name.equals("synchronize")
                                ? null : invoke(s, m, a);
                    }
                    if (!counted.test(Thread.currentThread())) {
                        return invoke(s, m, a);
                    }
                    listener.called(s.label(), m, a);
                    long t0 = mode == Mode.TIME ? System.nanoTime() : 0;
                    try {
                        return invoke(s, m, a);
                    } finally {
                        long[] c = byMethod.computeIfAbsent(name, k -> new long[2]);
                        synchronized (c) {
                            c[0]++;
                            c[1] += mode == Mode.TIME ? System.nanoTime() - t0 : 0;
                        }
                    }
                });
    }

    private static Object invoke(RuntimeStream s, Method m, Object[] a) throws Throwable {
        try {
            return m.invoke(s, a);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** TIME: one line per method, calls and µs per call per rank and the mean of one, then the sum. */
    public void printTimes(long callsTimesRanks, double perRankMicros) {
        double sum = 0;
        for (Map.Entry<String, long[]> e : byMethod().entrySet()) {
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
        // the delegate belongs to the caller
    }
}
