package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

/**
 * The command line of flexlink-perf: nccl-tests' options with their meanings, plus FlexLink's own.
 * Values are converted and range-checked while parsing, so every mistake is a picocli
 * {@code ParameterException} (exit code 2) before anything runs.
 */
@Command(name = "flexlink-perf", sortOptions = false, mixinStandardHelpOptions = true,
        versionProvider = PerfOptions.Version.class,
        description = "nccl-tests-compatible benchmark of FlexLink's collectives.%n"
                + "COLLECTIVE is all_reduce, all_gather, reduce_scatter, broadcast or reduce.",
        footer = "%nExit codes: 0 ok, 1 wrong results or a failed collective, 2 usage error, 3 gate failed.")
public final class PerfOptions {
    @Parameters(index = "0", paramLabel = "COLLECTIVE", converter = CollectiveConverter.class,
            description = "all_reduce | all_gather | reduce_scatter | broadcast | reduce")
    Collective collective;

    @Option(names = {"-b", "--minbytes"}, paramLabel = "BYTES", defaultValue = "32M", converter = SizeConverter.class,
            description = "Smallest size (K, M, G suffixes). Default: ${DEFAULT-VALUE}.")
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

    @Option(names = {"-g", "--ngpus"}, paramLabel = "RANKS", defaultValue = "1",
            description = "Ranks in this process, on devices 0..RANKS-1 (wrapping when RANKS exceeds the devices).")
    int ranks;

    @Option(names = {"-n", "--iters"}, defaultValue = "20", description = "Timed iterations. Default: ${DEFAULT-VALUE}.")
    int iters;

    @Option(names = {"-w", "--warmup_iters"}, defaultValue = "5",
            description = "Warm-up iterations per size. Default: ${DEFAULT-VALUE}.")
    int warmup;

    @Option(names = {"-c", "--check"}, paramLabel = "0|1", defaultValue = "1",
            description = "Check every element of every result. Default: ${DEFAULT-VALUE}.")
    int check;

    @Option(names = {"-d", "--datatype"}, paramLabel = "TYPE|all", defaultValue = "float",
            description = "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2, a comma list, "
                    + "or all. Default: ${DEFAULT-VALUE}.")
    String typesText;

    /** The element types, from -d. */
    List<DataType> types;

    @Option(names = {"-o", "--op"}, paramLabel = "OP|all", defaultValue = "sum",
            description = "sum prod max min avg, a comma list, or all. Default: ${DEFAULT-VALUE}.")
    String opsText;

    /** The reduction operations, from -o. */
    List<ReduceOp> ops;

    @Option(names = {"-r", "--root"}, defaultValue = "0",
            description = "Root of broadcast and reduce; -1 runs every root. Default: ${DEFAULT-VALUE}.")
    int root;

    @Option(names = {"-z", "--blocking"}, paramLabel = "0|1", defaultValue = "0",
            description = "Synchronize after every iteration. Default: ${DEFAULT-VALUE}.")
    int blocking;

    @Option(names = "--backend", paramLabel = "auto|host|cuda", defaultValue = "auto",
            description = "Runtime backend. Default: ${DEFAULT-VALUE}.")
    String backend;

    @Option(names = "--paths", paramLabel = "LIST", description = "Paths to split over, e.g. primary,pcie.")
    String paths;

    @Option(names = "--share", paramLabel = "SHARES", description = "Fixed shares, e.g. pcie=0.2, or auto.")
    String share;

    @Option(names = "--chunk", paramLabel = "BYTES", description = "Staging chunk (and slot) size.")
    String chunk;

    @Option(names = "--slots", paramLabel = "N", description = "Staging slots per producer.")
    String slots;

    @Option(names = "--min-split", paramLabel = "BYTES", description = "Calls below this size stay on the primary path.")
    String minSplit;

    @Option(names = "--emulate", paramLabel = "LINKS",
            description = "Host backend: emulated link speeds per path (primary, pcie, nvshmem; rail between nodes) "
                    + "in GB/s, MB/s or KB/s, with an optional latency per chunk in ns, us or ms, "
                    + "e.g. primary:400MB/s,pcie:100MB/s@50us.")
    String emulate;

    @Option(names = "--history", description = "Print the balancer's decisions (the convergence trace) at the end, "
            + "and on several nodes each stage's time (intra-node, rails).")
    boolean history;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of the checked data. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--baseline",
            description = "Also time the primary path alone and print vs = FlexLink busbw / baseline busbw "
                    + "(algbw on one rank, where busbw is 0).")
    boolean baseline;

    @Option(names = "--json", paramLabel = "FILE", description = "Write every row and the environment as JSON.")
    Path json;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Plot busbw and shares against size.")
    Path plot;

    @Option(names = "--replot", paramLabel = "FILE.json",
            description = "Only draw --plot from the JSON of an earlier run (for runs where Java has no java.desktop).")
    Path replot;

    @Option(names = "--gate", paramLabel = "MIN[,LARGE]",
            description = "With --baseline: exit 3 when out-of-place busbw < MIN x baseline at any size, "
                    + "or < LARGE x baseline at sizes >= 64M.")
    String gate;

    @Option(names = {"-v", "--verbose"}, description = "Log FlexLink's INFO lines on stderr.")
    boolean verbose;

    @Option(names = "--from-env", description = "Run as one rank of a multi-process job, one process per rank, "
            + "from the launcher's variables (torchrun's RANK, WORLD_SIZE, LOCAL_RANK, or OpenMPI's, Slurm's, PMI's) "
            + "and MASTER_ADDR, MASTER_PORT (-g must be 1): rank 0 prints the table, every process checks its own "
            + "results and exits with its own code; ranks on several nodes run hierarchically.")
    boolean fromEnv;

    /** The environment --from-env reads (the process's; tests inject one). */
    java.util.Map<String, String> environment = System.getenv();

    /** This process's place in a --from-env job, or null. */
    io.flexlink.bootstrap.LaunchEnv launch;

    /** Checks what single options cannot; throws FlexLinkException INVALID_ARGUMENT (exit code 2). */
    void validate() {
        types = parseTypes(typesText);
        ops = parseOps(opsText);
        require(ranks >= 1, "-g: at least one rank is needed, got " + ranks);
        if (fromEnv) {
            require(ranks == 1, "-g: must be 1 (or absent) with --from-env: each process is one rank, got " + ranks);
            launch = io.flexlink.bootstrap.LaunchEnv.parse(environment);
        }
        require(iters >= 1, "-n: at least one iteration is needed, got " + iters);
        require(warmup >= 0, "-w: must not be negative, got " + warmup);
        require(check >= 0, "-c: must be 0 or 1, got " + check);
        require(blocking == 0 || blocking == 1, "-z: must be 0 or 1, got " + blocking);
        require(stepFactor >= 1, "-f: must be at least 1, got " + stepFactor);
        require(minBytes <= maxBytes, "-b " + minBytes + " is larger than -e " + maxBytes);
        if (stepFactor > 1) {
            require(minBytes > 0, "-b: must be positive with -f");
        } else {
            require(stepBytes > 0 || minBytes == maxBytes, "-i: must be positive");
        }
        require(root >= -1 && root < worldSize(), "-r: root " + root + " is not a rank of " + worldSize()
                + " (or -1 for all)");
        String b = backend.toLowerCase(Locale.ROOT);
        require(b.equals("auto") || b.equals("host") || b.equals("cuda"),
                "--backend: '" + backend + "' is not one of auto|host|cuda");
        backend = b;
        if (gate != null) {
            require(baseline, "--gate needs --baseline");
            Gate.parse(gate);
        }
    }

    /** The FlexLink configuration these options ask for (unset settings come from properties, environment, defaults). */
    FlexLinkConfig config() {
        FlexLinkConfig.Builder cb = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, backend);
        if (paths != null) {
            cb.set(FlexLinkConfig.PATHS, paths);
        }
        if (share != null) {
            cb.set(FlexLinkConfig.SHARE, share);
        }
        if (chunk != null) {
            cb.set(FlexLinkConfig.CHUNK_BYTES, chunk);
        }
        if (slots != null) {
            cb.set(FlexLinkConfig.SLOTS, slots);
        }
        if (minSplit != null) {
            cb.set(FlexLinkConfig.MIN_SPLIT_BYTES, minSplit);
        }
        if (emulate != null) {
            cb.set(FlexLinkConfig.EMULATE, emulate);
        }
        FlexLinkConfig c = cb.build();
        // parse every setting now, so that a bad value is a usage error before anything runs
        c.paths();
        c.shares();
        c.chunkBytes();
        c.slots();
        c.minSplitBytes();
        c.hostDevices();
        io.flexlink.runtime.host.Emulation.parse(c.emulate());
        return c;
    }

    /** The operations rows run: the -o list for reductions, a single (unused) one for data movement. */
    List<ReduceOp> rowOps() {
        return collective.reduces() ? ops : List.of(ReduceOp.SUM);
    }

    /** The roots rows run: -r, or every rank for -1 (broadcast and reduce only). */
    List<Integer> rowRoots() {
        if (collective != Collective.BROADCAST && collective != Collective.REDUCE) {
            return List.of(-1);
        }
        if (root >= 0) {
            return List.of(root);
        }
        List<Integer> all = new ArrayList<>();
        for (int r = 0; r < worldSize(); r++) {
            all.add(r);
        }
        return all;
    }

    /** Ranks of the communicator: -g, or WORLD_SIZE with --from-env. */
    int worldSize() {
        return launch != null ? launch.worldSize : ranks;
    }

    /** The rank of this process's first rank (its only one with --from-env). */
    int firstRank() {
        return launch != null ? launch.rank : 0;
    }

    /** Whether this process prints the table: always, but only rank 0 with --from-env. */
    boolean printsTable() {
        return launch == null || launch.rank == 0;
    }

    /** The step as nccl-tests prints it: {@code 4(factor)} or {@code 1048576(bytes)}. */
    String stepText() {
        return stepFactor > 1 ? stepFactor + "(factor)" : stepBytes + "(bytes)";
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new FlexLinkException(io.flexlink.Result.INVALID_ARGUMENT, message);
        }
    }

    // ---- converters: each failure becomes one line on stderr and exit code 2 ----

    static final class CollectiveConverter implements ITypeConverter<Collective> {
        @Override
        public Collective convert(String value) {
            try {
                return Collective.parse(value);
            } catch (FlexLinkException e) {
                throw new TypeConversionException("unknown collective '" + value
                        + "' (all_reduce, all_gather, reduce_scatter, broadcast, reduce)");
            }
        }
    }

    static final class SizeConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return ByteSizes.parse(value);
            } catch (FlexLinkException e) {
                throw new TypeConversionException("'" + value + "' is not a size in bytes (e.g. 1024, 64K, 8M, 1G)");
            }
        }
    }

    static List<DataType> parseTypes(String value) {
        if (value.equalsIgnoreCase("all")) {
            return Arrays.asList(DataType.values());
        }
        List<DataType> out = new ArrayList<>();
        for (String t : value.split(",")) {
            DataType d = DataType.parse(t.trim());
            if (!out.contains(d)) {
                out.add(d);
            }
        }
        return out;
    }

    static List<ReduceOp> parseOps(String value) {
        if (value.equalsIgnoreCase("all")) {
            return Arrays.asList(ReduceOp.values());
        }
        List<ReduceOp> out = new ArrayList<>();
        for (String t : value.split(",")) {
            ReduceOp o = ReduceOp.parse(t.trim());
            if (!out.contains(o)) {
                out.add(o);
            }
        }
        return out;
    }

    static final class Version implements picocli.CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"flexlink-perf " + io.flexlink.FlexLink.VERSION + " (Java "
                    + System.getProperty("java.version") + ")"};
        }
    }
}
