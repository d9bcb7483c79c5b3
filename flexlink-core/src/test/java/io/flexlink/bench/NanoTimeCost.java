package io.flexlink.bench;

import java.util.Locale;

/**
 * The cost of one {@code System.nanoTime()} on this machine (a VM's clock source can make it a system call),
 * since the call path reads the clock for its throttled checks. Usage: {@code NanoTimeCost}.
 */
public final class NanoTimeCost {
    private NanoTimeCost() {
    }

    public static void main(String[] args) {
        long sink = 0;
        for (int turn = 0; turn < 5; turn++) {
            int n = 5_000_000;
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                sink += System.nanoTime();
            }
            long t1 = System.nanoTime();
            System.out.println(String.format(Locale.ROOT, "System.nanoTime: %.1f ns per call", (t1 - t0) / (double) n));
        }
        System.out.println(sink == 42 ? "" : "done");
    }
}
