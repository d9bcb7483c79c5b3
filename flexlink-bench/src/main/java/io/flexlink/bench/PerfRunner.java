package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.comm.Backends;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.BackendProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Runs a sweep: opens the backend, makes the FlexLink communicators (and the primary-only baseline's),
 * then for every type, operation, root and size times the collective out of place and in place, checks
 * the results, measures the split, times the baseline, and prints the row; then the footer, the gate,
 * the JSON and the plot. Returns the exit code.
 */
final class PerfRunner {
    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;

    PerfRunner(PerfOptions o, PrintStream out, PrintStream err) {
        this.o = o;
        this.out = out;
        this.err = err;
    }

    int run() throws IOException {
        FlexLinkConfig config = o.config();
        String note = backendNote();
        Backend backend;
        try {
            backend = Backends.open(config);
        } catch (FlexLinkException e) {
            if (o.backend.equals("cuda")) {
                // asked for explicitly and not there: a usage error, said in one line
                throw new FlexLinkException(Result.INVALID_ARGUMENT, e.detail(), e);
            }
            throw e;
        } catch (LinkageError e) {
            // native libraries that do not load: say so in one line, no stack trace
            throw new FlexLinkException(o.backend.equals("cuda") ? Result.INVALID_ARGUMENT : Result.SYSTEM_ERROR,
                    "backend " + o.backend + " cannot be opened: " + e, e);
        }
        try {
            if (!backend.name().equals("host") || o.backend.equals("cuda")) {
                note = backend.deviceCount() + " device" + (backend.deviceCount() == 1 ? "" : "s");
            }
            return runOn(backend, config, note);
        } finally {
            backend.close();
        }
    }

    /** Why the backend is what it is, for the header. */
    private String backendNote() {
        if (o.backend.equals("host")) {
            return "selected by --backend host";
        }
        if (o.backend.equals("cuda")) {
            return "selected by --backend cuda";
        }
        String reason;
        try {
            BackendProvider cuda = Backends.provider("cuda");
            reason = cuda == null ? "no CUDA backend on the class path" : cuda.unavailableReason();
        } catch (RuntimeException | LinkageError e) {
            reason = e.toString();
        }
        return reason == null ? "GPU found" : "no GPU usable, cuda unavailable: " + reason;
    }

    private int runOn(Backend backend, FlexLinkConfig config, String note) throws IOException {
        int n = o.ranks;
        int[] devices = new int[n];
        for (int r = 0; r < n; r++) {
            devices[r] = r % backend.deviceCount();
        }
        if (o.launch != null) {
            devices = new int[] {o.launch.device(backend.deviceCount())};
        }
        List<Long> sizes = SizeSweep.sizes(o.minBytes, o.maxBytes, o.stepFactor, o.stepBytes);
        long bufferBytes = sizes.isEmpty() ? 0 : sizes.get(sizes.size() - 1);
        Communicator[] flex = null;
        Communicator[] base = null;
        Workspace ws = null;
        boolean ok = false;
        try {
            flex = communicators(backend, config, devices);
            if (o.launch != null) {
                gather = new RankGather(backend, flex[0]);
            }
            RunEnv env = runEnv(backend, config, note, devices);
            ShareMeter fm = new ShareMeter(flex);
            ShareMeter bm = null;
            String baselineNote = null;
            if (o.baseline) {
                if (fm.hasPrimary()) {
                    base = communicators(backend, config.with(FlexLinkConfig.PATHS, "primary"), devices);
                    bm = new ShareMeter(base);
                    baselineNote = "primary path alone (flexlink.paths=primary), timed out of place after each FlexLink row";
                } else {
                    baselineNote = "skipped: this configuration has no primary path (several ranks share a device "
                            + "or --paths leaves it out), so there is nothing to compare with";
                    if (o.gate != null) {
                        throw new FlexLinkException(Result.INVALID_ARGUMENT, "--gate: no baseline is possible here ("
                                + "no primary path: several ranks share a device or --paths leaves it out)");
                    }
                }
            }
            ws = new Workspace(backend, devices, bufferBytes, o.firstRank(), o.worldSize());
            header(env, fm, baselineNote);
            Sweep sweep = new Sweep(ws, flex, fm, base, new DataCheck(backend));
            int code = sweep.run(sizes, env);
            balanceReport(flex[0]);
            ok = true;
            return code;
        } finally {
            if (!ok) {
                abort(flex);
                abort(base);
            }
            if (ws != null) {
                ws.close();
            }
            if (gather != null) {
                gather.close();
            }
            close(flex);
            close(base);
        }
    }

    /** Small exchanges between the processes of a --from-env run; null otherwise. */
    private RankGather gather;

    /** All ranks in this process (-g), or this process's one rank of a --from-env job. */
    private Communicator[] communicators(Backend backend, FlexLinkConfig config, int[] devices) {
        if (o.launch == null) {
            return FlexLink.initAll(backend, config, devices);
        }
        return new Communicator[] {FlexLink.initFromEnv(backend, config, o.environment)};
    }

    /** The run's description; with --from-env, every rank's device and process, gathered. */
    private RunEnv runEnv(Backend backend, FlexLinkConfig config, String note, int[] devices) {
        long[] pids = null;
        if (gather != null) {
            long[][] all = gather.gather(ProcessHandle.current().pid(), devices[0]);
            devices = new int[all.length];
            pids = new long[all.length];
            for (int r = 0; r < all.length; r++) {
                pids[r] = all[r][0];
                devices[r] = (int) all[r][1];
            }
        }
        RunEnv env = new RunEnv(o.collective.testName() + "_perf", backend.name(), note, backend.toString(),
                backend.deviceCount(), devices, config);
        env.pids = pids;
        return env;
    }

    /** The balancer's converged shares per size bucket, and with --history its decisions. */
    private void balanceReport(Communicator comm) {
        io.flexlink.CommStats stats = comm.stats();
        if (stats.shares().isEmpty()) {
            return;
        }
        out.println("# Balanced shares (collective/bucket: auxiliary shares):");
        for (java.util.Map.Entry<String, java.util.Map<String, Double>> e : stats.shares().entrySet()) {
            StringBuilder sb = new StringBuilder("#   ").append(e.getKey());
            for (java.util.Map.Entry<String, Double> p : e.getValue().entrySet()) {
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

    private void header(RunEnv env, ShareMeter fm, String baselineNote) {
        out.printf(Locale.ROOT, "# flexlink-perf version %s (nccl-tests compatible) java %s%n",
                RunEnv.flexlinkVersion(), System.getProperty("java.version"));
        out.println("# Collective test starting: " + env.program);
        out.printf(Locale.ROOT, "# nThread 1 nGpus %d minBytes %d maxBytes %d step: %s warmup iters: %d iters: %d "
                        + "agg iters: 1 validation: %d graph: 0%n",
                o.ranks, o.minBytes, o.maxBytes, o.stepText(), o.warmup, o.iters, o.check);
        if (o.blocking != 0) {
            out.println("# Blocking Enabled: wait after each iteration");
        }
        out.println("# Backend: " + env.backend + " (" + env.backendNote + ")");
        FlexLinkConfig c = env.config;
        out.printf(Locale.ROOT, "# FlexLink: paths %s (primary %s), auxiliary %s, share %s, chunk %d B, slots %d, "
                        + "min split %d B%n",
                String.join(",", c.paths()), fm.hasPrimary() ? "on" : "off", fm.auxPaths(),
                c.raw(FlexLinkConfig.SHARE), c.chunkBytes(), c.slots(), c.minSplitBytes());
        if (baselineNote != null) {
            out.println("# Baseline: " + baselineNote);
        }
        out.println("#");
        out.println("# Using devices");
        for (int r = 0; r < env.devices.length; r++) {
            out.printf(Locale.ROOT, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s%n",
                    r, 0, env.pid(r), env.host, env.devices[r], env.backend, env.backendDescription);
        }
        out.flush();
    }

    /** The loops over types, operations, roots and sizes. */
    private final class Sweep {
        private final Workspace ws;
        private final Communicator[] flex;
        private final ShareMeter fm;
        private final Communicator[] base;
        private final DataCheck check;
        private final List<Row> rows = new ArrayList<>();
        private final Progress tuneProgress = new Progress(err, TUNE_BUDGET);

        Sweep(Workspace ws, Communicator[] flex, ShareMeter fm, Communicator[] base, DataCheck check) {
            this.ws = ws;
            this.flex = flex;
            this.fm = fm;
            this.base = base;
            this.check = check;
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
            Gate gate = o.gate == null ? null : Gate.parse(o.gate);
            boolean gatePassed = gate == null || gate.check(rows);
            if (gate != null) {
                reportGate(gate, gatePassed);
            }
            table.footer(env.program);
            String title = String.format(Locale.ROOT, "%s, %d ranks, %s backend", c.testName(), o.worldSize(),
                    env.backend);
            if (o.json != null && o.printsTable()) { // --from-env: rank 0 writes the files
                JsonReport.write(o.json, o, env, fm.auxPaths(), rows, fm, base == null ? null : new ShareMeter(base),
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

        /** Wrong elements this process found (--from-env: the table shows every rank's). */
        private long localWrong;

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
            {
                long bytes = (long) s.count * type.size()
                        * (c == Collective.ALL_GATHER || c == Collective.REDUCE_SCATTER ? o.worldSize() : 1);
                String label = io.flexlink.balance.SizeBuckets.label(io.flexlink.balance.SizeBuckets.channel(c, bytes));
                ws.layout(c, s.count, type, false);
                String last = null;
                int still = 0;
                for (int i = 0; i < TUNE_BUDGET && still < TUNE_QUIET; i++) {
                    ws.enqueue(flex, c, s.count, type, op, root);
                    ws.synchronize();
                    io.flexlink.CommStats st = flex[0].stats();
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

    /** Most calls spent letting the balancer settle one size, and how many unchanged calls mean settled. */
    static final int TUNE_BUDGET = 400;
    static final int TUNE_QUIET = 12;

    private static void abort(Communicator[] comms) {
        if (comms == null) {
            return;
        }
        for (Communicator c : comms) {
            try {
                c.abort();
            } catch (RuntimeException e) {
                // best effort
            }
        }
    }

    private static void close(Communicator[] comms) {
        if (comms == null) {
            return;
        }
        for (Communicator c : comms) {
            try {
                c.close();
            } catch (RuntimeException e) {
                // best effort
            }
        }
    }
}
