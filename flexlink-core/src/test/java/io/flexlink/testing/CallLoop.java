package io.flexlink.testing;

import io.flexlink.runtime.RuntimeStream;

/**
 * The host-cost probes' timed loop: a call run in batches of {@link #BATCH}, the stream synchronized after
 * each batch (so that its queue stays short), until the time is up.
 */
public final class CallLoop {
    /** Calls between two synchronizations. */
    public static final int BATCH = 1000;

    /** How many calls ran, and the wall-clock µs per call. */
    public record Timing(long calls, double microsPerCall) {
    }

    private CallLoop() {
    }

    /** Runs {@code call} for about {@code seconds}, synchronizing {@code stream} every {@link #BATCH} calls. */
    public static Timing run(Runnable call, RuntimeStream stream, double seconds) {
        long t0 = System.nanoTime();
        long end = t0 + (long) (seconds * 1e9);
        long calls = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < BATCH; i++) {
                call.run();
            }
            stream.synchronize();
            calls += BATCH;
        }
        return new Timing(calls, (System.nanoTime() - t0) / 1e3 / calls);
    }
}
