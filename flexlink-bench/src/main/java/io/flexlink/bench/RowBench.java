package io.flexlink.bench;

import io.flexlink.runtime.RuntimeGraph;
import java.io.PrintStream;
import java.util.List;

/**
 * Measures one row, as nccl-tests' BenchTime does for each of out of place and in place: one untimed
 * call, the threads' timed loops ({@link TimedLoop}), their times combined by -a, then -c checked calls.
 * With --baseline the out-of-place runs alternate: half of FlexLink's iterations, half of the
 * baseline's, half of FlexLink-primary-only's, then the other halves in reverse order, so that a drift
 * of the machine during the row (clocks, other load) falls on every side alike.
 */
final class RowBench {
    private final PerfOptions o;
    private final Workspace ws;
    private final DriverThreads threads;
    private final TimedLoop loop;
    private final StreamWait wait;
    /** Between the processes of a --from-env run, or null. */
    private final RankGather gather;
    private final DataCheck check;
    /** Test hook run before each check's comparison, or null. */
    private final DataCheck.Tamper tamper;
    private final PrintStream err;

    RowBench(PerfOptions o, Workspace ws, DriverThreads threads, StreamWait wait, RankGather gather, DataCheck check,
             DataCheck.Tamper tamper, PrintStream err) {
        this.o = o;
        this.ws = ws;
        this.threads = threads;
        this.wait = wait;
        this.loop = new TimedLoop(o, wait, threads);
        this.gather = gather;
        this.check = check;
        this.tamper = tamper;
        this.err = err;
    }

    /**
     * The seconds of one call and -I's per-iteration times, the threads and processes combined; the host's
     * seconds of one call (-C) are the first thread's, as nccl-tests prints its own thread's.
     */
    static final class Measured {
        final double seconds;
        final double cpuSeconds;
        final double[] iterations;

        Measured(double seconds, double cpuSeconds, double[] iterations) {
            this.seconds = seconds;
            this.cpuSeconds = cpuSeconds;
            this.iterations = iterations;
        }
    }

    /** One untimed call on every local rank, enqueued from this thread as one group, and waited for. */
    void once(CallTarget target, CallSpec call) {
        target.enqueue(call, 0, ws.ranks(), 0);
        wait.awaitAll();
    }

    /**
     * The call that -c checks: {@link #once}, or with -G (as nccl-tests) the call captured into one graph
     * per rank and that graph launched once, so that what is checked is what was timed.
     */
    private void checkedCall(CallTarget target, CallSpec call) {
        if (o.graphLaunches == 0) {
            once(target, call);
            return;
        }
        RuntimeGraph[] graphs = GraphCapture.capture(ws, 0, ws.ranks(), () -> target.enqueue(call, 0, ws.ranks(), 0));
        try {
            GraphCapture.launch(graphs, ws, 0, 1);
            wait.awaitAll();
        } finally {
            GraphCapture.close(graphs);
        }
    }

    /** -w: {@code iters} untimed calls at this size (nccl-tests' warm-up runs them at a doubling sweep of sizes). */
    void warm(CallTarget target, CallSpec call, int iters) {
        ws.layout(call.shape, false);
        for (int i = 0; i < iters; i++) {
            target.enqueue(call, 0, ws.ranks(), i);
        }
        wait.awaitAll();
    }

    /** Times {@code iters} iterations of {@code call} on {@code target} on every thread. */
    Measured time(CallTarget target, CallSpec call, boolean inPlace, int iters) {
        ws.layout(call.shape, inPlace);
        once(target, call);
        if (gather != null) {
            gather.barrier();
        }
        List<TimedLoop.Times> per = threads.run(t -> loop.run(target, call, t, iters));
        double[] seconds = new double[per.size()];
        double[] iterations = null;
        for (int t = 0; t < per.size(); t++) {
            seconds[t] = per.get(t).seconds;
            if (per.get(t).iterations != null) {
                iterations = iterations == null ? per.get(t).iterations
                        : IterStats.maxPerIteration(iterations, per.get(t).iterations);
            }
        }
        double combined = combine(o.average, seconds);
        if (gather != null) {
            combined = acrossProcesses(combined);
            if (iterations != null) {
                iterations = maxAcrossProcesses(iterations);
            }
        }
        return new Measured(combined, per.get(0).cpuSeconds, iterations);
    }

    /** Out of place, alternating with the baselines (null when absent); fills the row's three runs. */
    Measured timeAlternating(CallTarget flex, CallTarget base, CallTarget prim, CallSpec call, Row row) {
        int first = (o.iters + 1) / 2;
        int second = o.iters / 2;
        if (base == null) {
            return time(flex, call, false, o.iters);
        }
        Measured f1 = time(flex, call, false, first);
        Measured b1 = time(base, call, false, first);
        Measured p1 = prim == null ? null : time(prim, call, false, first);
        Measured p2 = prim == null || second == 0 ? null : time(prim, call, false, second);
        Measured b2 = second == 0 ? null : time(base, call, false, second);
        Measured f2 = second == 0 ? null : time(flex, call, false, second);
        row.baseline = run(call, merge(b1, b2, first, second), -1);
        if (prim != null) {
            row.primaryOnly = run(call, merge(p1, p2, first, second), -1);
        }
        return merge(f1, f2, first, second);
    }

    private static Measured merge(Measured a, Measured b, int na, int nb) {
        if (b == null) {
            return a;
        }
        double seconds = (a.seconds * na + b.seconds * nb) / (na + nb);
        double cpu = (a.cpuSeconds * na + b.cpuSeconds * nb) / (na + nb);
        double[] it = null;
        if (a.iterations != null) {
            it = new double[na + nb];
            System.arraycopy(a.iterations, 0, it, 0, na);
            System.arraycopy(b.iterations, 0, it, na, nb);
        }
        return new Measured(seconds, cpu, it);
    }

    /**
     * -c: {@code o.check} calls, each on fresh data, every output element compared; stops at the first
     * call with wrong elements (whose count it returns, summed over the processes); -1 without -c, and for
     * a run the collective does not define (sendrecv in place).
     */
    long check(CallTarget target, CallSpec call, boolean inPlace, long seed, Row row) {
        long wrong = -1;
        if (inPlace && !call.collective.checksInPlace()) {
            return wrong; // sendrecv in place: not defined, N/A as in nccl-tests
        }
        for (int c = 0; c < o.check; c++) {
            ws.layout(call.shape, inPlace);
            check.prepare(ws, call, seed + 1_000_003L * c);
            checkedCall(target, call);
            if (tamper != null) {
                tamper.beforeVerify(ws);
            }
            wrong = check.verify(ws);
            if (wrong > 0) {
                err.println("flexlink-perf: " + row.label() + (inPlace ? " in place" : " out of place") + ", checked call "
                        + (c + 1) + ": " + wrong + " wrong elements, e.g. " + String.join("; ", check.errors()));
            }
            long all = wrong;
            if (gather != null) {
                all = 0;
                for (long[] r : gather.gather(wrong)) {
                    all += r[0]; // every process must stop at the same call
                }
            }
            if (all > 0) {
                break;
            }
        }
        return wrong;
    }

    /** A timed run's columns: time, algbw and busbw as nccl-tests computes them, and -I's statistics. */
    Row.Run run(CallSpec call, Measured m, long wrong) {
        int n = ws.commSize(); // nccl-tests' getBw gets the size of the (sub-)communicator
        double sec = m.seconds;
        double algBw = sec > 0 ? (double) call.shape.count * call.shape.typeSize * call.collective.algMultiplier(n)
                / 1e9 / sec : 0;
        IterStats stats = m.iterations == null ? null : new IterStats(m.iterations, o.perIterSkip);
        boolean cpu = o.reportCputime == 1;
        return new Row.Run((cpu ? m.cpuSeconds : sec) * 1e6, algBw, algBw * call.collective.busFactor(n), wrong, stats,
                cpu);
    }

    /**
     * -a: how the threads' times combine, as nccl-tests: 0 the first thread's (rank 0's), 1 the average,
     * 2 the fastest, 3 the slowest.
     */
    static double combine(int mode, double[] values) {
        double out = values[0];
        double sum = 0;
        for (double v : values) {
            sum += v;
            if (mode == 2) {
                out = Math.min(out, v);
            } else if (mode == 3) {
                out = Math.max(out, v);
            }
        }
        return mode == 1 ? sum / values.length : out;
    }

    private double acrossProcesses(double mine) {
        long[][] all = gather.gather(Double.doubleToRawLongBits(mine));
        double[] values = new double[all.length];
        for (int r = 0; r < all.length; r++) {
            values[r] = Double.longBitsToDouble(all[r][0]);
        }
        return combine(o.average, values);
    }

    /** The slowest process per iteration (8 iterations per exchange). */
    private double[] maxAcrossProcesses(double[] mine) {
        double[] out = mine.clone();
        for (int at = 0; at < mine.length; at += 8) {
            long[] words = new long[Math.min(8, mine.length - at)];
            for (int i = 0; i < words.length; i++) {
                words[i] = Double.doubleToRawLongBits(mine[at + i]);
            }
            for (long[] r : gather.gather(words)) {
                for (int i = 0; i < words.length; i++) {
                    out[at + i] = Math.max(out[at + i], Double.longBitsToDouble(r[i]));
                }
            }
        }
        return out;
    }
}
