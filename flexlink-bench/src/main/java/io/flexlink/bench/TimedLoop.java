package io.flexlink.bench;

import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeGraph;
import java.util.List;

/**
 * One thread's timed iterations, as nccl-tests' BenchTime: -n iterations of -m calls each (one group
 * when -m is above 1), waits and barriers by -z, the host's clock around the whole loop, and with -I a
 * timing event on every rank's stream per iteration. Returns the time of one call.
 *
 * <p>-z 1 and 2 wait after each call; with -m above 1 they wait once the iteration's group has ended:
 * inside a group nothing has launched yet, so a wait there would wait for nothing (nccl-tests' does).
 * -z 3 waits after each iteration, then meets the other threads; the time excludes the barrier.
 *
 * <p>-G, as nccl-tests' BenchTime: the same -n iterations of -m calls are captured once into one graph per
 * rank instead of running, the threads meet, and the clock runs around -G launches of every rank's graph
 * until the streams are done; the time of one call is that over {@code -n x -m x -G}. (-I and -z are
 * refused with -G: nccl-tests turns them off.)
 */
final class TimedLoop {
    /** What one thread measured. */
    static final class Times {
        /** Wall time of one call, seconds. */
        final double seconds;
        /**
         * Host time of one call (-C): the loop's enqueueing, the final wait left out (-z 3: its iterations,
         * barriers left out; -G: the launches), over {@code -n x -m}, as nccl-tests' cputime.
         */
        final double cpuSeconds;
        /** Per iteration, the slowest of this thread's ranks (event time over -m), or null without -I. */
        final double[] iterations;

        Times(double seconds, double cpuSeconds, double[] iterations) {
            this.seconds = seconds;
            this.cpuSeconds = cpuSeconds;
            this.iterations = iterations;
        }
    }

    private final int agg;
    private final int blocking;
    /** -G: graph launches, 0 for none. */
    private final int graphLaunches;
    private final boolean perIter;
    private final StreamWait wait;
    private final DriverThreads threads;

    TimedLoop(PerfOptions o, StreamWait wait, DriverThreads threads) {
        this.agg = o.aggIters;
        this.blocking = o.blocking;
        this.graphLaunches = o.graphLaunches;
        this.perIter = o.perIter == 1;
        this.wait = wait;
        this.threads = threads;
    }

    /** Thread {@code t}'s loop of {@code iters} iterations of {@code call} on {@code target}. */
    Times run(CallTarget target, CallSpec call, int t, int iters) {
        int from = threads.from(t);
        int to = threads.to(t);
        if (graphLaunches > 0) {
            return graphed(target, call, from, to, iters);
        }
        boolean paired = blocking == 3;
        int eventCount = paired ? 2 * iters : iters + 1;
        if (perIter) {
            for (int r = from; r < to; r++) {
                call.ws.events(r, eventCount); // made before the clock starts
            }
        }
        long collOnly = 0;
        long t0 = System.nanoTime();
        for (int iter = 0; iter < iters; iter++) {
            long ti = System.nanoTime();
            if (agg > 1) {
                target.groupStart();
            }
            if (perIter) {
                record(call.ws, from, to, paired ? 2 * iter : iter, eventCount);
            }
            for (int a = 0; a < agg; a++) {
                target.enqueue(call, from, to, iter * agg + a);
                if (agg == 1) {
                    afterCall(from, to);
                }
            }
            if (agg > 1) {
                target.groupEnd();
                afterCall(from, to);
            }
            if (blocking == 3) {
                wait.await(from, to);
                if (perIter) {
                    record(call.ws, from, to, 2 * iter + 1, eventCount);
                }
                collOnly += System.nanoTime() - ti;
                threads.barrier();
            }
        }
        if (perIter && !paired) {
            record(call.ws, from, to, iters, eventCount);
        }
        long enqueued = blocking == 3 ? collOnly : System.nanoTime() - t0;
        if (blocking == 0 || blocking == 3) {
            wait.await(from, to); // nccl-tests' completeColl; -z 1 and 2 waited already
        }
        long elapsed = blocking == 3 ? collOnly : System.nanoTime() - t0;
        double calls = (double) iters * agg;
        return new Times(elapsed / 1e9 / calls, enqueued / 1e9 / calls,
                perIter ? iterations(call.ws, from, to, iters, eventCount, paired) : null);
    }

    /** -G: the iterations captured once per rank, then -G launches of the graphs timed. */
    private Times graphed(CallTarget target, CallSpec call, int from, int to, int iters) {
        RuntimeGraph[] graphs = GraphCapture.capture(call.ws, from, to, () -> {
            for (int iter = 0; iter < iters; iter++) {
                if (agg > 1) {
                    target.groupStart();
                }
                for (int a = 0; a < agg; a++) {
                    target.enqueue(call, from, to, iter * agg + a);
                }
                if (agg > 1) {
                    target.groupEnd();
                }
            }
        });
        try {
            threads.barrier();
            long t0 = System.nanoTime();
            GraphCapture.launch(graphs, call.ws, from, graphLaunches);
            long launched = System.nanoTime() - t0;
            wait.await(from, to);
            long elapsed = System.nanoTime() - t0;
            // nccl-tests' cputime of -G: the launches over -n x -m (not over -G too, unlike the time)
            return new Times(elapsed / 1e9 / ((double) iters * agg * graphLaunches), launched / 1e9 / ((double) iters * agg),
                    null);
        } finally {
            GraphCapture.close(graphs);
        }
    }

    private void afterCall(int from, int to) {
        if (blocking == 1 || blocking == 2) {
            wait.await(from, to);
            if (blocking == 1) {
                threads.barrier();
            }
        }
    }

    private static void record(Workspace ws, int from, int to, int index, int eventCount) {
        for (int r = from; r < to; r++) {
            ws.stream(r).record(ws.events(r, eventCount).get(index));
        }
    }

    private double[] iterations(Workspace ws, int from, int to, int iters, int eventCount, boolean paired) {
        double[] out = new double[iters];
        for (int r = from; r < to; r++) {
            List<RuntimeEvent> ev = ws.events(r, eventCount);
            for (int i = 0; i < iters; i++) {
                RuntimeEvent start = ev.get(paired ? 2 * i : i);
                RuntimeEvent stop = ev.get(paired ? 2 * i + 1 : i + 1);
                stop.synchronize();
                out[i] = Math.max(out[i], stop.elapsedMillis(start) / 1e3 / agg);
            }
        }
        return out;
    }
}
