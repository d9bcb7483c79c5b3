package io.flexlink.cuda.bench;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;

/**
 * A long loop of 8-byte AllReduce calls on one rank (synchronized every 1000), for a profiler (JFR) to
 * sample where FlexLink's host time per call goes, with a sampler of its own (the stack of the calling thread
 * every 100 µs, the top frames counted; safepoint-biased, which is enough to rank methods).
 * Usage: {@code EightByteLoop seconds}.
 */
public final class EightByteLoop {
    private EightByteLoop() {
    }

    private static void print(String title, java.util.Map<String, Integer> counts) {
        int total = counts.values().stream().mapToInt(Integer::intValue).max().orElse(1);
        System.out.println("## " + title);
        counts.entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(45)
                .forEach(e -> System.out.printf("%7d %s%n", e.getValue(), e.getKey()));
        System.out.println("(max " + total + ")");
    }

    public static void main(String[] args) {
        long seconds = Long.parseLong(args[0]);
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment())) {
            Communicator comm = FlexLink.initAll(backend, FlexLinkConfig.fromEnvironment(), 0)[0];
            RuntimeStream s = backend.createStream(0, "loop");
            DeviceMemory buf = backend.allocate(0, 8);
            long a = buf.address();
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long calls = 0;
            Thread caller = Thread.currentThread();
            java.util.Map<String, Integer> top = new java.util.concurrent.ConcurrentHashMap<>();
            java.util.Map<String, Integer> self = new java.util.concurrent.ConcurrentHashMap<>();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    StackTraceElement[] st = caller.getStackTrace();
                    if (st.length > 0) {
                        self.merge(st[0].getClassName() + "." + st[0].getMethodName(), 1, Integer::sum);
                        java.util.Set<String> seen = new java.util.HashSet<>();
                        for (StackTraceElement e : st) {
                            String k = e.getClassName() + "." + e.getMethodName();
                            if (seen.add(k)) {
                                top.merge(k, 1, Integer::sum);
                            }
                        }
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                }
            }, "sampler");
            sampler.setDaemon(true);
            sampler.start();
            long t0 = System.nanoTime();
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) {
                    comm.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM, s);
                }
                s.synchronize();
                calls += 1000;
            }
            System.out.printf("%d calls, %.3f us per call (with a synchronize every 1000)%n", calls,
                    (System.nanoTime() - t0) / 1e3 / calls);
            sampler.interrupt();
            print("self (top frame)", self);
            print("inclusive", top);
            comm.close();
            buf.close();
            s.close();
        }
    }
}
