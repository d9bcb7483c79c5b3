package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.comm.Backends;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.BackendProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * Sets a run up and tears it down: opens the backend, makes the FlexLink communicators (and the
 * primary-only baseline's), the buffers and the checker, prints the header, and hands the rows to a
 * {@link Sweep}. Returns the exit code.
 */
final class PerfRunner {
    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;
    /** Test hook run before each check, or null. */
    private final DataCheck.Tamper tamper;
    /** Small exchanges between the processes of a --from-env run; null otherwise. */
    private RankGather gather;

    PerfRunner(PerfOptions o, PrintStream out, PrintStream err) {
        this(o, out, err, null);
    }

    PerfRunner(PerfOptions o, PrintStream out, PrintStream err, DataCheck.Tamper tamper) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.tamper = tamper;
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
                devices = new int[] {flex[0].device()}; // a launcher without a local rank: the node's choice
            }
            if (o.launch != null) {
                gather = new RankGather(backend, flex[0]);
            }
            RunEnv env = runEnv(backend, config, note, devices);
            ShareMeter fm = new ShareMeter(flex);
            ShareMeter bm = null;
            String baselineNote = null;
            if (o.baseline) {
                if (fm.hasPrimary()) {
                    // the primary path alone: no shares either (a share for a path not enabled is an error)
                    FlexLinkConfig primaryOnly = config.with(FlexLinkConfig.PATHS, "primary")
                            .with(FlexLinkConfig.SHARE, "auto");
                    base = communicators(backend, primaryOnly, devices);
                    bm = new ShareMeter(base);
                    baselineNote = "primary path alone (flexlink.paths=primary), timed out of place after each "
                            + "FlexLink row; " + vsNote();
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
            header(env, fm, baselineNote, flex[0]);
            Sweep sweep = new Sweep(o, out, err, gather, ws, flex, fm, base, new DataCheck(backend), tamper);
            int code = sweep.run(sizes, env);
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
        RunEnv env = new RunEnv(o.collective.testName() + "_perf", BackendFacts.of(backend), note, devices, config);
        env.pids = pids;
        return env;
    }

    /** What the vs column divides, said in the header. */
    private String vsNote() {
        Row.Basis basis = Row.Basis.of(o.collective, o.worldSize());
        return "vs = FlexLink " + basis.label() + " / baseline " + basis.label() + (basis == Row.Basis.ALGBW
                ? " (busbw is 0 on one rank; the algbw ratio is the baseline's time over FlexLink's)" : "");
    }

    private void header(RunEnv env, ShareMeter fm, String baselineNote, Communicator flex0) {
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
        out.println(env.facts.headerLine());
        FlexLinkConfig c = env.config;
        out.printf(Locale.ROOT, "# FlexLink: paths %s (primary %s), auxiliary %s, share %s, chunk %d B, slots %d, "
                        + "min split %d B%n",
                String.join(",", c.paths()), fm.hasPrimary() ? "on" : "off", fm.auxPaths(),
                c.raw(FlexLinkConfig.SHARE), c.chunkBytes(), c.slots(), c.minSplitBytes());
        out.println(NodeReport.header(flex0));
        if (baselineNote != null) {
            out.println("# Baseline: " + baselineNote);
        }
        out.println("#");
        out.println("# Using devices");
        for (int r = 0; r < env.devices.length; r++) {
            out.printf(Locale.ROOT, "#  Rank %2d Group %2d Pid %6d on %10s device %2d %s%n",
                    r, 0, env.pid(r), env.host, env.devices[r], env.facts.deviceLabel(env.devices[r]));
        }
        out.flush();
    }

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
