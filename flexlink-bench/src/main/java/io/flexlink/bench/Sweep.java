package io.flexlink.bench;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.balance.SizeBuckets;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The loops of one run, as nccl-tests' TimeTest: per type, operation and root, the -w warm-up over a
 * doubling sweep of sizes, then -N cycles of the size sweep; per size FlexLink's balancer settles, then
 * out of place (alternating with the baselines) and in place are timed and checked and the row printed.
 * Then the balancer's shares, the gate, the footer, the JSON and the plot. Returns the exit code.
 */
final class Sweep {
    /** Most calls spent letting the balancer settle one size, and how many unchanged calls mean settled. */
    static final int TUNE_BUDGET = 400;
    static final int TUNE_QUIET = 12;

    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;
    private final RunParts p;
    private final RowBench bench;
    private final Row.Basis basis;
    private final List<Row> rows = new ArrayList<>();
    /** Wrong elements this process found (--from-env: the table shows every rank's). */
    private long localWrong;

    /** What a run is made of, set up by {@link PerfRunner}. */
    static final class RunParts {
        Workspace ws;
        FlexCalls flex;
        ShareMeter meter;
        Baselines baselines = Baselines.none();
        RankGather gather;
        Progress progress;
        RunEnv env;
        /** -R 1's registrations, or null. */
        LocalRegistration registration;
    }

    Sweep(PerfOptions o, PrintStream out, PrintStream err, RunParts p, RowBench bench) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.p = p;
        this.bench = bench;
        this.basis = Row.Basis.of(o.collective, o.commSize());
    }

    int run(List<Long> sizes) throws IOException {
        List<PerfOp> ops = o.rowOps();
        List<Integer> roots = o.rowRoots();
        ResultTable table = new ResultTable(out, p.meter.auxPaths(), o.check > 0, p.baselines.raw != null,
                o.perIter == 1).cpuTime(o.reportCputime == 1);
        table.header();
        long total = (long) o.types.size() * ops.size() * roots.size() * sizes.size() * Math.max(1, o.cycles);
        long index = 0;
        for (DataType type : o.types) {
            for (PerfOp op : ops) {
                for (int root : roots) {
                    warmUp(type, op, root);
                    for (int cycle = 0; o.cycles == 0 || cycle < o.cycles; cycle++) {
                        for (long size : sizes) {
                            p.progress.update(index + 1, total, type.ncclName() + " " + op.ncclName() + " " + size + " B");
                            Row row = row(type, op, root, size, index++);
                            row.cycle = cycle;
                            p.progress.clear();
                            table.row(row);
                            rows.add(row);
                        }
                    }
                }
            }
        }
        p.progress.clear();
        new RunReport(o, out, err).balance(p.flex.communicators()[0]);
        if (o.flex.history) {
            NodeReport.stages(out, p.flex.communicators()[0]);
        }
        Gate gate = o.flex.gate == null ? null : Gate.parse(o.flex.gate);
        boolean gatePassed = gate == null || gate.check(rows);
        if (gate != null) {
            new RunReport(o, out, err).gate(gate, gatePassed, rows.size());
        }
        table.footer(o.collective.programName(), o.minAverageBusBw); // the footer stays last, as in nccl-tests
        if (o.printsTable()) { // --from-env: rank 0 writes the files
            new RunReport(o, out, err).files(p, rows, basis, table, gate, gatePassed);
        }
        // with --from-env the table counts every rank's wrong elements, the exit code this process's own
        long wrong = p.gather == null ? table.wrong() : localWrong;
        if (wrong != 0) {
            err.println("flexlink-perf: " + wrong + " wrong elements" + (p.gather == null ? "" : " on rank "
                    + o.firstRank()) + " (see #wrong)");
            return PerfMain.EXIT_FAILED;
        }
        if (!table.averagePasses(o.minAverageBusBw)) {
            err.println("flexlink-perf: Avg bus bandwidth " + CFormat.g(table.averageBusBw()) + " is below 0.9 x "
                    + "NCCL_TESTS_MIN_BW " + CFormat.g(o.minAverageBusBw));
            return PerfMain.EXIT_GATE;
        }
        return gatePassed ? PerfMain.EXIT_OK : PerfMain.EXIT_GATE;
    }

    /** -w, as nccl-tests: at sizes -b, 2 x -b, ... up to -e, {@code -w} calls each, out of place; every target. */
    private void warmUp(DataType type, PerfOp op, int root) {
        if (o.warmup == 0) {
            return;
        }
        for (long size : SizeSweep.warmSizes(o.minBytes, o.maxBytes)) {
            CallSpec call = new CallSpec(o.collective, o.collective.shape(size, type, o.commSize()), type, op, root, p.ws);
            bench.warm(p.flex, call, o.warmup);
            if (p.baselines.raw != null) {
                bench.warm(p.baselines.raw, call, o.warmup);
            }
            if (p.baselines.primaryOnly != null) {
                bench.warm(p.baselines.primaryOnly, call, o.warmup);
            }
        }
    }

    private Row row(DataType type, PerfOp op, int root, long size, long index) {
        PerfCollective.Shape s = o.collective.shape(size, type, o.commSize());
        CallSpec call = new CallSpec(o.collective, s, type, op, root, p.ws);
        Row row = new Row(s.bytes, s.count, type, o.collective.printsOp() ? op : null, root);
        row.noOpName = o.collective.noOpName();
        row.basis = basis;
        long seed = o.flex.seed + 2 * index;
        tune(call);
        p.meter.mark();
        RowBench.Measured oop = bench.timeAlternating(p.flex, p.baselines.raw, p.baselines.primaryOnly, call, row);
        row.outOfPlace = bench.run(call, oop, bench.check(p.flex, call, false, seed, row));
        RowBench.Measured ip = bench.time(p.flex, call, true, o.iters);
        row.inPlace = bench.run(call, ip, bench.check(p.flex, call, true, seed + 1, row));
        row.shares = p.meter.sharesSinceMark();
        if (p.gather != null) {
            localWrong += row.wrong();
            sumWrong(call, row);
        }
        return row;
    }

    /** --from-env: the row's wrong elements as the job saw them, every rank's (the times are combined already). */
    private void sumWrong(CallSpec call, Row row) {
        long[][] all = p.gather.gather(row.outOfPlace.wrong, row.inPlace.wrong);
        long oop = 0;
        long ip = 0;
        for (long[] r : all) {
            oop += Math.max(0, r[0]);
            ip += Math.max(0, r[1]);
        }
        row.outOfPlace = withWrong(row.outOfPlace, oop);
        row.inPlace = withWrong(row.inPlace, ip);
    }

    private static Row.Run withWrong(Row.Run r, long wrong) {
        return new Row.Run(r.timeUs, r.algBw, r.busBw, r.wrong < 0 ? -1 : wrong, r.iterations, r.cpuTime);
    }

    /**
     * Lets the balancer settle this size before it is timed (FlexLink's own warm-up, which nccl-tests
     * does not have): one call at a time, so that each call's measurement is in before the next
     * decision, until the size's channel is tuned and its shares have not moved for a few calls, within a
     * budget. Nothing to do with fixed shares or below the split threshold, nor for the point-to-point
     * patterns.
     */
    private void tune(CallSpec call) {
        if (!call.collective.tunes()) {
            return; // sendrecv, hypercube: sends and receives use AlltoAll's shares, and the balancer times none
        }
        Communicator first = p.flex.communicators()[0];
        long bytes = call.shape.count * call.shape.typeSize * call.collective.algMultiplier(o.commSize());
        String label = SizeBuckets.label(SizeBuckets.channel(call.collective.collective(), bytes));
        p.ws.layout(call.shape, false);
        String last = null;
        int still = 0;
        for (int i = 0; i < TUNE_BUDGET && still < TUNE_QUIET; i++) {
            bench.once(p.flex, call);
            CommStats st = first.stats();
            String stage = st.stages().get(label);
            String now = stage + st.shares().get(label);
            boolean settled = "FINE".equals(stage) || "PRIMARY_ONLY".equals(stage);
            int next = stage == null ? -1 : settled && now.equals(last) ? still + 1 : 0;
            if (p.gather != null) {
                next = (int) p.gather.fromRankZero(next); // every process must make the same calls
            }
            if (next < 0) {
                return; // below the split threshold: never balanced
            }
            still = next;
            last = now;
            p.progress.update(i + 1, TUNE_BUDGET, "tuning " + label + ": " + stage + " " + st.shares().get(label));
        }
        p.progress.clear();
    }
}
