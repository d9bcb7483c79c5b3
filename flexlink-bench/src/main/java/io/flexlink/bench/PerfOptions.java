package io.flexlink.bench;

import io.flexlink.DataType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

/**
 * The command line of flexlink-perf: nccl-tests 2.19's options with their meanings (here), FlexLink's
 * own in {@link FlexOptions}. Values are converted while parsing; what single options cannot check,
 * {@link OptionChecks} does before anything runs. Every mistake is exit code 2.
 */
@Command(name = "flexlink-perf", sortOptions = false,
        versionProvider = PerfOptions.Version.class,
        description = "nccl-tests-compatible benchmark of FlexLink's collectives.%n"
                + "COLLECTIVE is all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, gather, scatter, "
                + "sendrecv or hypercube (power-of-two rank counts), as nccl-tests' binaries.",
        footer = "%nExit codes: 0 ok, 1 wrong results, a failed collective or a timeout (-T), 2 usage error "
                + "or a feature FlexLink lacks, 3 gate or NCCL_TESTS_MIN_BW failed.")
public final class PerfOptions {
    @Parameters(index = "0", paramLabel = "COLLECTIVE", description = "all_reduce | all_gather | reduce_scatter | "
            + "broadcast | reduce | alltoall | gather | scatter | sendrecv | hypercube")
    String collectiveName;

    /** The collective's row of nccl-tests' table, from COLLECTIVE. */
    PerfCollective collective;

    @Option(names = {"-t", "--nthreads"}, paramLabel = "THREADS", defaultValue = "1",
            description = "Threads in this process, each driving -g ranks. Default: ${DEFAULT-VALUE}.")
    int threads;

    @Option(names = {"-g", "--ngpus"}, paramLabel = "RANKS", defaultValue = "1",
            description = "Ranks per thread, on devices 0..t*g-1 (wrapping when there are fewer devices).")
    int ranksPerThread;

    @Option(names = {"-b", "--minbytes"}, paramLabel = "BYTES", defaultValue = "32M", converter = SizeConverter.class,
            description = "Smallest size (K, M, G: binary; fractions such as 1.5G). Default: ${DEFAULT-VALUE}.")
    long minBytes;

    @Option(names = {"-e", "--maxbytes"}, paramLabel = "BYTES", defaultValue = "32M", converter = SizeConverter.class,
            description = "Largest size. Default: ${DEFAULT-VALUE}.")
    long maxBytes;

    @Option(names = {"-i", "--stepbytes"}, paramLabel = "BYTES", defaultValue = "1M", converter = SizeConverter.class,
            description = "Additive step, used unless -f is above 1. Default: ${DEFAULT-VALUE}.")
    long stepBytes;

    @Option(names = {"-f", "--stepfactor"}, paramLabel = "FACTOR", defaultValue = "1",
            description = "Multiplicative step (wins over -i when above 1). Default: ${DEFAULT-VALUE}.")
    long stepFactor;

    @Option(names = {"-n", "--iters"}, paramLabel = "N", defaultValue = "20", description = "Timed iterations. Default: ${DEFAULT-VALUE}.")
    int iters;

    @Option(names = {"-m", "--agg_iters"}, paramLabel = "N", defaultValue = "1",
            description = "Calls aggregated in one group per iteration. Default: ${DEFAULT-VALUE}.")
    int aggIters;

    @Option(names = {"-w", "--warmup_iters"}, paramLabel = "N", defaultValue = "1",
            description = "Warm-up iterations at each size of a doubling sweep before timing. Default: ${DEFAULT-VALUE}.")
    int warmup;

    @Option(names = {"-N", "--run_cycles"}, paramLabel = "N", defaultValue = "1",
            description = "Runs of the size sweep, each printed; 0 runs until interrupted. Default: ${DEFAULT-VALUE}.")
    int cycles;

    @Option(names = {"-c", "--check"}, paramLabel = "N", defaultValue = "1",
            description = "Check every element of N calls' results, each on fresh data (0: none). Default: ${DEFAULT-VALUE}.")
    int check;

    @Option(names = {"-d", "--datatype"}, paramLabel = "TYPE|all", defaultValue = "float",
            description = "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2, a comma list, "
                    + "or all. Default: ${DEFAULT-VALUE}.")
    String typesText;

    /** The element types, from -d. */
    List<DataType> types;

    @Option(names = {"-o", "--op"}, paramLabel = "OP|all", defaultValue = "sum",
            description = "sum prod max min avg mulsum (PreMulSum with nccl-tests' scalars: 1 on even ranks, 2 on odd), "
                    + "a comma list, or all. "
                    + "Default: ${DEFAULT-VALUE}.")
    String opsText;

    /** The reduction operations, from -o. */
    List<PerfOp> ops;

    @Option(names = {"-r", "--root"}, paramLabel = "ROOT|all", defaultValue = "0", converter = RootConverter.class,
            description = "Root of broadcast, reduce, gather and scatter; all (or -1) runs every root. "
                    + "Default: ${DEFAULT-VALUE}.")
    int root;

    @Option(names = {"-z", "--blocking"}, paramLabel = "0-3", defaultValue = "0",
            description = "0 non-blocking; 1 wait and barrier after each call (-m); 2 wait after each call, no barrier; "
                    + "3 wait and barrier after each iteration (-n), the time excluding the barrier. Default: ${DEFAULT-VALUE}.")
    int blocking;

    @Option(names = {"-a", "--average"}, paramLabel = "0-3", defaultValue = "1",
            description = "How the threads' and processes' times combine: 0 rank 0's, 1 average, 2 min, 3 max. "
                    + "Default: ${DEFAULT-VALUE}.")
    int average;

    @Option(names = {"-I", "--per_iter_timing"}, paramLabel = "0|1", defaultValue = "0",
            description = "Time each iteration with events and print i_min, i_max, i_p99, i_cv%% after each time "
                    + "column. Default: ${DEFAULT-VALUE}.")
    int perIter;

    @Option(names = {"-C", "--report_cputime"}, paramLabel = "0|1", defaultValue = "0",
            description = "1: the time columns are cputime, the host's time per call of enqueueing the timed loop "
                    + "(this thread's ranks together, the final wait left out; algbw and busbw stay the wall "
                    + "time's). Default: ${DEFAULT-VALUE}.")
    int reportCputime;

    @Option(names = {"-K", "--per_iter_skip"}, paramLabel = "N", defaultValue = "0",
            description = "Leave the first N iterations out of the -I columns (the JSON keeps them). Default: ${DEFAULT-VALUE}.")
    int perIterSkip;

    @Option(names = {"-T", "--timeout"}, paramLabel = "SECONDS", defaultValue = "0",
            description = "Abort when a wait for the collectives takes longer (exit 1); 0: no timeout. Default: ${DEFAULT-VALUE}.")
    int timeout;

    @Option(names = {"-u", "--unalign"}, paramLabel = "ELEMENTS", defaultValue = "0",
            description = "Misalign send and receive buffers by this many elements. Default: ${DEFAULT-VALUE}.")
    int unalign;

    @Option(names = {"-G", "--cudagraph"}, paramLabel = "LAUNCHES", defaultValue = "0",
            description = "Capture each timed run's -n iterations into a CUDA graph per rank and launch it LAUNCHES "
                    + "times; the time is over -n x -m x LAUNCHES calls; checked calls run as a graph too (CUDA "
                    + "backend only; not with -I or -z). Default: ${DEFAULT-VALUE}.")
    int graphLaunches;

    @Option(names = {"-R", "--local_register"}, paramLabel = "0|1|2", defaultValue = "0",
            description = "Buffer registration: 1 registers every rank's send and receive buffers with its "
                    + "communicators (ncclCommRegister; FlexLink passes it to NCCL where NCCL is its primary path), "
                    + "2 (symmetric windows) is refused: FlexLink has none. Default: ${DEFAULT-VALUE}.")
    int register;

    @Mixin
    FlexOptions flex = new FlexOptions();

    // no -V: nccl-tests uses it for the device CTA count, which must not print a version and exit 0
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    @Option(names = "--version", versionHelp = true, description = "Print the version and exit.")
    boolean version;

    /** The environment: --from-env's variables and NCCL_TESTS_* (the process's; tests inject one). */
    Map<String, String> environment = System.getenv();

    /** This process's place in a --from-env job, or null. */
    io.flexlink.bootstrap.LaunchEnv launch;

    /** NCCL_TESTS_MIN_BW: the average busbw below 0.9 x which the run fails (exit 3), or NaN. */
    double minAverageBusBw = Double.NaN;

    /** Each rank's communicator (NCCL_TESTS_SPLIT), set by {@link OptionChecks}. */
    RankLayout layout;

    /** Ranks driven by this process: -t x -g. */
    int localRanks() {
        return threads * ranksPerThread;
    }

    /** Ranks of the communicator: -t x -g, or WORLD_SIZE with --from-env. */
    int worldSize() {
        return launch != null ? launch.worldSize : localRanks();
    }

    /** The rank of this process's first rank (its only one with --from-env). */
    int firstRank() {
        return launch != null ? launch.rank : 0;
    }

    /** Ranks of the communicator each collective runs on: {@link #worldSize()}, or a sub-communicator's. */
    int commSize() {
        return layout.commSize();
    }

    /** Whether this process prints the table: always, but only rank 0 with --from-env. */
    boolean printsTable() {
        return launch == null || launch.rank == 0;
    }

    /** The step as nccl-tests prints it: {@code 4(factor)} or {@code 1048576(bytes)}. */
    String stepText() {
        return stepFactor > 1 ? stepFactor + "(factor)" : stepBytes + "(bytes)";
    }

    /** The operations rows run: the -o list for reductions (and sendrecv, as nccl-tests), a single (unused) one otherwise. */
    List<PerfOp> rowOps() {
        return collective.printsOp() ? ops : List.of(PerfOp.SUM);
    }

    /** The roots rows run: -r, or every rank for all (rooted collectives only); -1 for the others. */
    List<Integer> rowRoots() {
        if (!collective.rooted()) {
            return List.of(-1);
        }
        if (root >= 0) {
            return List.of(root);
        }
        List<Integer> all = new ArrayList<>();
        for (int r = 0; r < commSize(); r++) {
            all.add(r);
        }
        return all;
    }

    // ---- converters: each failure becomes one line on stderr and exit code 2 ----

    static final class SizeConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return NcclSize.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    static final class RootConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            if (value.equalsIgnoreCase("all")) {
                return -1;
            }
            try {
                return Integer.decode(value.trim());
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + value + "' is not a rank (or all)");
            }
        }
    }

    static final class Version implements picocli.CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"flexlink-perf " + io.flexlink.FlexLink.VERSION + " (nccl-tests "
                    + PerfHeader.NCCL_TESTS_VERSION + " options and output; Java " + System.getProperty("java.version")
                    + ")"};
        }
    }
}
