package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.BackendProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Sets a run up and tears it down: opens the backend, makes FlexLink's communicators (split by color with
 * NCCL_TESTS_SPLIT; with --from-env the job's is kept for the processes' exchanges), the workspace
 * (buffers and streams), the baselines, the threads and the checker, prints the header, and hands the
 * rows to a {@link Sweep}. Returns the exit code. On any failure every communicator is aborted first,
 * which releases streams still blocked in a collective.
 */
final class PerfRunner {
    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;
    /** Test hook run before each check, or null. */
    private final DataCheck.Tamper tamper;
    private final Progress progress;

    PerfRunner(PerfOptions o, PrintStream out, PrintStream err, DataCheck.Tamper tamper, Progress progress) {
        this.o = o;
        this.out = out;
        this.err = err;
        this.tamper = tamper;
        this.progress = progress;
    }

    int run() throws IOException {
        FlexLinkConfig config = o.flex.config();
        String detail = o.flex.backend.equals("auto") ? cudaUnavailableReason() : null;
        Backend backend;
        try {
            backend = FlexLink.openBackend(config);
        } catch (FlexLinkException e) {
            if (o.flex.backend.equals("cuda")) {
                // asked for explicitly and not there: a usage error, said in one line
                throw new FlexLinkException(Result.INVALID_ARGUMENT, e.detail(), e);
            }
            throw e;
        } catch (LinkageError e) {
            // native libraries that do not load: say so in one line, no stack trace
            throw new FlexLinkException(o.flex.backend.equals("cuda") ? Result.INVALID_ARGUMENT : Result.SYSTEM_ERROR,
                    "backend " + o.flex.backend + " cannot be opened: " + e, e);
        }
        try {
            String note;
            if (!o.flex.backend.equals("auto")) {
                note = "selected by --backend " + o.flex.backend;
            } else if (backend.name().equals("host")) {
                note = "no GPU: host backend";
            } else {
                note = "GPU found, " + backend.deviceCount() + " device" + (backend.deviceCount() == 1 ? "" : "s");
            }
            return runOn(backend, config, note, backend.name().equals("host") ? detail : null);
        } finally {
            backend.close();
        }
    }

    /** Why the CUDA backend cannot run here (the long story behind "no GPU"), or null when it can. */
    private static String cudaUnavailableReason() {
        try {
            for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
                if (p.name().equals("cuda")) {
                    return p.unavailableReason();
                }
            }
            return "no CUDA backend (flexlink-native) on the class path";
        } catch (RuntimeException | LinkageError e) {
            return e.toString();
        }
    }

    private int runOn(Backend backend, FlexLinkConfig config, String note, String detail) throws IOException {
        int n = o.localRanks();
        int[] devices = new int[n];
        for (int r = 0; r < n; r++) {
            devices[r] = r % backend.deviceCount();
        }
        if (o.launch != null) {
            devices = new int[] {o.launch.device(backend.deviceCount())};
        }
        List<Long> sizes = SizeSweep.sizes(o.minBytes, o.maxBytes, o.stepFactor, o.stepBytes);
        // the warm-up doubles from -b up to -e, past the sweep's last size when -f does not land on -e
        List<Long> warm = SizeSweep.warmSizes(o.minBytes, o.maxBytes);
        long maxBytes = Math.max(sizes.isEmpty() ? 0 : sizes.get(sizes.size() - 1),
                o.warmup == 0 || warm.isEmpty() ? 0 : warm.get(warm.size() - 1));
        Sweep.RunParts p = new Sweep.RunParts();
        p.progress = progress;
        DriverThreads threads = null;
        Communicator[] job = null; // --from-env with a split: the job's communicator, which RankGather uses
        boolean ok = false;
        if (o.graphLaunches > 0) {
            GraphCapture.requireCapture(backend, devices[0], o.graphLaunches); // exit 2 before anything is made
        }
        try {
            Communicator[] comms = communicators(backend, config, devices);
            if (o.layout.split != null) {
                job = comms;
                comms = SplitComms.split(job, o.layout);
                if (o.launch == null) {
                    close(job); // a split communicator does not depend on its parent; only --from-env gathers over it
                    job = null;
                }
            }
            p.flex = new FlexCalls("FlexLink", comms);
            if (o.launch != null) {
                // a launcher without a local rank: the device the node layout chose
                devices = new int[] {comms[0].device()};
                // the processes' exchanges (pids, times, wrong counts) span the job, as nccl-tests' MPI_COMM_WORLD
                p.gather = new RankGather(backend, job != null ? job[0] : comms[0]);
            }
            p.env = runEnv(backend, config, note, devices, p.gather);
            p.env.backendDetail = detail;
            p.meter = new ShareMeter(p.flex.communicators());
            Workspace.StreamSource streams = streamSource(backend, n);
            p.ws = new Workspace(backend, streams, devices, maxBytes, o.unalign, o.firstRank(), o.layout);
            if (o.flex.baseline) {
                p.baselines = Baselines.open(o, backend, config, devices, streams, p.gather, p.meter.hasPrimary());
                if (o.flex.gate != null && p.baselines.raw == null) {
                    throw new FlexLinkException(Result.INVALID_ARGUMENT, "--gate: no baseline is possible here ("
                            + p.baselines.missing + ")");
                }
            }
            if (o.register == 1) {
                p.registration = LocalRegistration.of(p.ws, p.flex, p.baselines.raw, p.baselines.primaryOnly);
            }
            threads = new DriverThreads(o.threads, o.ranksPerThread, p.gather);
            StreamWait wait = new StreamWait(p.ws, o.timeout);
            RowBench bench = new RowBench(o, p.ws, threads, wait, p.gather, new DataCheck(backend), tamper, err);
            PerfHeader.print(out, o, p);
            int code = new Sweep(o, out, err, p, bench).run(sizes);
            ok = true;
            return code;
        } finally {
            if (!ok) {
                if (p.flex != null) {
                    p.flex.abort();
                }
                abort(job);
                p.baselines.abort();
                if (p.ws != null) {
                    p.ws.abandon();
                }
            }
            if (threads != null) {
                threads.close();
            }
            if (p.registration != null) {
                p.registration.close(); // before the workspace frees the buffers, as nccl-tests deregisters first
            }
            if (p.ws != null) {
                p.ws.close();
            }
            p.baselines.close();
            if (p.gather != null) {
                p.gather.close();
            }
            if (p.flex != null) {
                p.flex.close();
            }
            close(job);
        }
    }

    private static void abort(Communicator[] comms) {
        if (comms != null) {
            for (Communicator c : comms) {
                try {
                    c.abort();
                } catch (RuntimeException e) {
                    // best effort: the run already failed
                }
            }
        }
    }

    private static void close(Communicator[] comms) {
        if (comms != null) {
            for (Communicator c : comms) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    // best effort
                }
            }
        }
    }

    /** On CUDA, streams the tool creates and wraps (the raw NCCL baseline needs their handles); else the backend's. */
    private static Workspace.StreamSource streamSource(Backend backend, int ranks) {
        if (isCuda(backend)) {
            return new CudaStreams((io.flexlink.cuda.CudaBackend) backend, ranks);
        }
        return new Workspace.StreamSource() {
            @Override
            public io.flexlink.runtime.RuntimeStream open(int rank, int device) {
                return backend.createStream(device, "perf.r" + rank);
            }

            @Override
            public void close() {
                // the workspace closes each stream
            }
        };
    }

    private static boolean isCuda(Backend backend) {
        try {
            return backend instanceof io.flexlink.cuda.CudaBackend;
        } catch (LinkageError e) {
            return false; // flexlink-native's classes do not load here: then the backend is not CUDA either
        }
    }

    /** All ranks in this process (-t x -g), or this process's one rank of a --from-env job. */
    private Communicator[] communicators(Backend backend, FlexLinkConfig config, int[] devices) {
        if (o.launch == null) {
            return FlexLink.initAll(backend, config, devices);
        }
        return new Communicator[] {FlexLink.initFromEnv(backend, config, o.environment)};
    }

    /** The run's description; with --from-env, every rank's device and process, gathered. */
    private RunEnv runEnv(Backend backend, FlexLinkConfig config, String note, int[] devices, RankGather gather) {
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
        RunEnv env = new RunEnv(o.collective.programName(), BackendFacts.of(backend), note, devices, config);
        env.pids = pids;
        return env;
    }
}
