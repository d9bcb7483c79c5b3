package io.flexlink.cuda.bench;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A sampler of one thread's stack every 100 µs (the JRE on the GPU host has no flight recorder): the top
 * frame and every frame on the stack are counted. Safepoint-biased, which is enough to rank methods.
 */
final class StackSampler implements AutoCloseable {
    private final Map<String, Integer> self = new ConcurrentHashMap<>();
    private final Map<String, Integer> inclusive = new ConcurrentHashMap<>();
    private final Thread sampler;

    StackSampler(Thread target, String ignoreTop) {
        sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                StackTraceElement[] st = target.getStackTrace();
                if (st.length > 0 && !(st[0].getClassName() + "." + st[0].getMethodName()).equals(ignoreTop)) {
                    self.merge(st[0].getClassName() + "." + st[0].getMethodName(), 1, Integer::sum);
                    Set<String> seen = new HashSet<>();
                    for (StackTraceElement e : st) {
                        String k = e.getClassName() + "." + e.getMethodName();
                        if (seen.add(k)) {
                            inclusive.merge(k, 1, Integer::sum);
                        }
                    }
                }
                LockSupport.parkNanos(100_000);
            }
        }, "sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    @Override
    public void close() {
        sampler.interrupt();
        print("self (top frame)", self, 40);
        print("inclusive", inclusive, 60);
    }

    private static void print(String title, Map<String, Integer> counts, int limit) {
        System.out.println("## " + title);
        counts.entrySet().stream().sorted((x, y) -> y.getValue() - x.getValue()).limit(limit)
                .forEach(e -> System.out.printf("%7d %s%n", e.getValue(), e.getKey()));
    }
}
