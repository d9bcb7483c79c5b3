package io.flexlink.bench;

import io.flexlink.CommStats;
import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.balance.SizeBuckets;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The loops over types, operations, roots and sizes of one run: for each row lets the balancer settle
 * the size, times the collective out of place and in place, checks the results, measures the split,
 * times the baseline and prints the row; then the balancer's shares, the gate, the footer, the JSON and
 * the plot. Returns the exit code.
 */
final class Sweep {
    /** Most calls spent letting the balancer settle one size, and how many unchanged calls mean settled. */
    static final int TUNE_BUDGET = 400;
    static final int TUNE_QUIET = 12;

    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;
    /** Small exchanges between the processes of a --from-env run; null otherwise. */
    private final RankGather gather;
    /** What vs, the gate and the plot compare. */
    private final Row.Basis basis;
    /** Test hook run before each check, or null. */
    private final DataCheck.Tamper tamper;
    private final Workspace ws;
    private final Communicator[] flex;
    private final ShareMeter fm;
    private final Communicator[] base;
    private final DataCheck check;
    private final List<Row> rows = new ArrayList<>();
    private final Progress tuneProgress;
    /** Wrong elements this process found (--from-env: the table shows every rank's). */
    private long localWrong;

    /** {@code base}: the baseline's communicators, or null; {@code gather} and {@code tamper} may be null. */
    Sweep(PerfOptions o, PrintStream out, PrintStream err, RankGather gather, Workspace ws, Communicator[] flex,
          ShareMeter fm, Communicator[] base, DataCheck check, DataCheck.Tamper tamper) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.gather = gather;
        this.ws = ws;
        this.flex = flex;
        this.fm = fm;
        this.base = base;
        this.check = check;
        this.tamper = tamper;
        this.basis = Row.Basis.of(o.collective, o.worldSize());
        this.tuneProgress = new Progress(err, TUNE_BUDGET);
    }

    int run(List<Long> sizes, RunEnv env) throws IOException {
        Collective c = o.collective;
        List<ReduceOp> ops = o.rowOps();
        List<Integer> roots = o.rowRoots();
        ResultTable table = new ResultTable(out, fm.auxPaths(), o.check > 0, base != null);
        table.header();
        Progress progress = new Progress(err, o.types.size() * ops.size() * roots.size() * sizes.size());
        long index = 0;
        for (DataType type : o.types) {
            for (ReduceOp op : ops) {
                for (int root : roots) {
                    for (long size : sizes) {
                        progress.update((int) index + 1, type.ncclName() + " " + op.ncclName() + " " + size + " B");
                        Row row = row(c, type, op, root, size, index++);
                        progress.clear();
                        table.row(row);
                        rows.add(row);
                    }
                }
            }
        }
        progress.clear();
        balanceReport(flex[0]);
        if (o.history) {
            NodeReport.stages(out, flex[0]);
        }
        Gate gate = o.gate == null ? null : Gate.parse(o.gate);
        boolean gatePassed = gate == null || gate.check(rows);
        if (gate != null) {
            reportGate(gate, gatePassed);
        }
        table.footer(env.program); // the footer stays last, as in nccl-tests
        String title = String.format(Locale.ROOT, "%s, %d ranks, %s backend", c.testName(), o.worldSize(),
                env.backend);
        if (o.json != null && o.printsTable()) { // --from-env: rank 0 writes the files
            JsonReport.write(o.json, o, env, fm.auxPaths(), rows, basis, fm, base == null ? null : new ShareMeter(base),
                    table, gate, gatePassed);
        }
        if (o.plot != null && o.printsTable()) {
            try {
                PlotWriter.write(o.plot, title, rows, fm.auxPaths());
            } catch (LinkageError e) {
                // a jlinked runtime without java.desktop: the table and the JSON are still good
                err.println("flexlink-perf: --plot skipped, this Java has no java.desktop (" + e
                        + "); draw it elsewhere with --replot " + (o.json == null ? "RUN.json" : o.json)
                        + " --plot " + o.plot);
            }
        }
        // with --from-env the table counts every rank's wrong elements, the exit code this process's own
        long wrong = gather == null ? table.wrong() : localWrong;
        if (wrong != 0) {
            err.println("flexlink-perf: " + wrong + " wrong elements" + (gather == null ? "" : " on rank "
                    + o.firstRank()) + " (see #wrong)");
            return PerfMain.EXIT_FAILED;
        }
        return gatePassed ? PerfMain.EXIT_OK : PerfMain.EXIT_GATE;
    }

    /** The balancer's converged shares per size bucket, and with --history its decisions. */
    private void balanceReport(Communicator comm) {
        CommStats stats = comm.stats();
        if (stats.shares().isEmpty()) {
            return;
        }
        out.println("# Balanced shares (collective/bucket: auxiliary shares):");
        for (Map.Entry<String, Map<String, Double>> e : stats.shares().entrySet()) {
            StringBuilder sb = new StringBuilder("#   ").append(e.getKey());
            for (Map.Entry<String, Double> p : e.getValue().entrySet()) {
                sb.append(' ').append(p.getKey()).append('=').append(String.format(Locale.ROOT, "%.4f", p.getValue()));
            }
            out.println(sb);
        }
        if (o.history) {
            out.println("# Balancer decisions (rank 0):");
            for (String line : stats.history()) {
                out.println("#   " + line);
            }
        }
        out.flush();
    }

    private void reportGate(Gate gate, boolean passed) {
        if (passed) {
            out.println("# Gate: passed (" + gate.describe() + ")");
            return;
        }
        out.println("# Gate: FAILED (" + gate.describe() + ") in " + gate.failures().size() + " of "
                + rows.size() + " rows:");
        for (String f : gate.failures()) {
            out.println("#   " + f);
        }
        err.println("flexlink-perf: gate failed in " + gate.failures().size() + " rows (" + gate.describe() + ")");
    }

    private Row row(Collective c, DataType type, ReduceOp op, int root, long size, long index) {
        SizeSweep.Shape s = SizeSweep.shape(c, size, type, o.worldSize());
        Row row = new Row(s.bytes, s.count, type, c.reduces() ? op : null, root);
        row.basis = basis;
        long seed = o.seed + 2 * index;
        tune(c, s, type, op, root);
        fm.mark();
        row.outOfPlace = measure(flex, c, s, type, op, root, false, o.warmup, seed, row);
        row.inPlace = measure(flex, c, s, type, op, root, true, Math.min(1, o.warmup), seed + 1, row);
        row.shares = fm.sharesSinceMark();
        if (base != null) {
            ws.layout(c, s.count, type, false);
            ws.warm(base, c, s.count, type, op, root, o.warmup);
            row.baseline = run(c, s, ws.time(base, c, s.count, type, op, root, o.iters, o.blocking != 0), -1);
        }
        if (gather != null) {
            localWrong += row.wrong();
            combineRanks(c, s, row);
        }
        return row;
    }

    /** --from-env: the row as the job saw it: the slowest rank's times, every rank's wrong elements. */
    private void combineRanks(Collective c, SizeSweep.Shape s, Row row) {
        long[][] all = gather.gather(Double.doubleToRawLongBits(row.outOfPlace.timeUs), row.outOfPlace.wrong,
                Double.doubleToRawLongBits(row.inPlace.timeUs), row.inPlace.wrong,
                Double.doubleToRawLongBits(row.baseline == null ? 0 : row.baseline.timeUs));
        double oop = 0;
        double ip = 0;
        double bl = 0;
        long oopWrong = 0;
        long ipWrong = 0;
        for (long[] r : all) {
            oop = Math.max(oop, Double.longBitsToDouble(r[0]));
            ip = Math.max(ip, Double.longBitsToDouble(r[2]));
            bl = Math.max(bl, Double.longBitsToDouble(r[4]));
            oopWrong += Math.max(0, r[1]);
            ipWrong += Math.max(0, r[3]);
        }
        row.outOfPlace = run(c, s, oop / 1e6, row.outOfPlace.wrong < 0 ? -1 : oopWrong);
        row.inPlace = run(c, s, ip / 1e6, row.inPlace.wrong < 0 ? -1 : ipWrong);
        if (row.baseline != null) {
            row.baseline = run(c, s, bl / 1e6, -1);
        }
    }

    /**
     * Lets the balancer settle this size before it is timed: one call at a time (so that each call's
     * measurement is in before the next decision) until the size's channel is tuned and its shares have
     * not moved for a few calls, within a budget. Nothing to do with fixed shares.
     */
    private void tune(Collective c, SizeSweep.Shape s, DataType type, ReduceOp op, int root) {
        long bytes = (long) s.count * type.size()
                * (c == Collective.ALL_GATHER || c == Collective.REDUCE_SCATTER ? o.worldSize() : 1);
        String label = SizeBuckets.label(SizeBuckets.channel(c, bytes));
        ws.layout(c, s.count, type, false);
        String last = null;
        int still = 0;
        for (int i = 0; i < TUNE_BUDGET && still < TUNE_QUIET; i++) {
            ws.enqueue(flex, c, s.count, type, op, root);
            ws.synchronize();
            CommStats st = flex[0].stats();
            String stage = st.stages().get(label);
            String now = stage + st.shares().get(label);
            boolean settled = "FINE".equals(stage) || "PRIMARY_ONLY".equals(stage);
            int next = stage == null ? -1 : settled && now.equals(last) ? still + 1 : 0;
            if (gather != null) {
                next = (int) gather.fromRankZero(next); // every process must make the same calls
            }
            if (next < 0) {
                return; // below the split threshold: never balanced
            }
            still = next;
            last = now;
            tuneProgress.update(i + 1, "tuning " + label + ": " + stage + " " + st.shares().get(label));
        }
        tuneProgress.clear();
    }

    private Row.Run measure(Communicator[] comms, Collective c, SizeSweep.Shape s, DataType type, ReduceOp op,
                            int root, boolean inPlace, int warm, long seed, Row row) {
        ws.layout(c, s.count, type, inPlace);
        ws.warm(comms, c, s.count, type, op, root, warm);
        double sec = ws.time(comms, c, s.count, type, op, root, o.iters, o.blocking != 0);
        long wrong = -1;
        if (o.check > 0) {
            check.prepare(ws, c, s.count, type, op, root, seed);
            ws.enqueue(comms, c, s.count, type, op, root);
            ws.synchronize();
            if (tamper != null) {
                tamper.beforeVerify(ws);
            }
            wrong = check.verify(ws);
            if (wrong > 0) {
                err.println("flexlink-perf: " + row.label() + (inPlace ? " in place" : " out of place") + ": "
                        + wrong + " wrong elements, e.g. " + String.join("; ", check.errors()));
            }
        }
        return run(c, s, sec, wrong);
    }

    private Row.Run run(Collective c, SizeSweep.Shape s, double sec, long wrong) {
        double algBw = sec > 0 ? s.bytes / 1e9 / sec : 0;
        return new Row.Run(sec * 1e6, algBw, algBw * c.busFactor(o.worldSize()), wrong);
    }
}
