package io.flexlink.bench;

import io.flexlink.runtime.RuntimeStream;
import java.util.concurrent.locks.LockSupport;

/**
 * Waiting for a range of local ranks' streams, with nccl-tests' -T: without a timeout a plain
 * synchronize; with one, the streams are polled (a short park between polls, so that the host backend's
 * stream threads keep the cores) and a wait that lasts longer throws {@link Timeout}, after which the
 * run aborts every communicator (which releases the streams) and exits 1.
 */
final class StreamWait {
    /** Between two polls of a stream that is still busy. */
    private static final long POLL_NANOS = 50_000;

    /** A wait for the collectives took longer than -T. */
    static final class Timeout extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Timeout(String message) {
            super(message);
        }
    }

    private final Workspace ws;
    private final int timeoutSeconds;

    StreamWait(Workspace ws, int timeoutSeconds) {
        this.ws = ws;
        this.timeoutSeconds = timeoutSeconds;
    }

    /** Waits for local ranks {@code from..to-1}; throws their streams' first failure, or {@link Timeout}. */
    void await(int from, int to) {
        if (timeoutSeconds == 0) {
            for (int r = from; r < to; r++) {
                ws.stream(r).synchronize();
            }
            return;
        }
        long deadline = System.nanoTime() + timeoutSeconds * 1_000_000_000L;
        for (int r = from; r < to; r++) {
            RuntimeStream s = ws.stream(r);
            while (!s.isIdle()) {
                if (System.nanoTime() - deadline > 0) {
                    throw new Timeout("Test timeout (" + timeoutSeconds + "s): rank " + ws.globalRank(r)
                            + "'s stream is still busy");
                }
                LockSupport.parkNanos(POLL_NANOS);
            }
            s.synchronize(); // idle: returns at once, or throws the stream's failure
        }
    }

    /** Every local rank. */
    void awaitAll() {
        await(0, ws.ranks());
    }
}
