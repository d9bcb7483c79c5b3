package io.flexlink.bench;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What single options cannot check, before anything runs: ranges, combinations, the -d/-o/--share lists,
 * that --json and --plot can be written, the NCCL_TESTS_* variables, and the features FlexLink lacks.
 * Every failure is FlexLinkException INVALID_ARGUMENT naming the argument (exit code 2).
 */
final class OptionChecks {
    /** Most ranks one process drives (-t x -g): far above any node, far below what would exhaust memory. */
    static final int MAX_LOCAL_RANKS = 1024;

    private OptionChecks() {
    }

    static void validate(PerfOptions o) {
        o.collective = PerfCollective.find(o.collectiveName);
        require(o.collective != null, "COLLECTIVE: unknown '" + o.collectiveName + "' (nccl-tests' are "
                + PerfCollective.names() + ")");
        refuseMissing(o);
        o.types = types(o.typesText);
        o.ops = ops(o.opsText);
        require(o.threads >= 1, "-t: at least one thread is needed, got " + o.threads);
        require(o.ranksPerThread >= 1, "-g: at least one rank per thread is needed, got " + o.ranksPerThread);
        require((long) o.threads * o.ranksPerThread <= MAX_LOCAL_RANKS, "-t x -g: at most " + MAX_LOCAL_RANKS
                + " ranks in one process, got " + (long) o.threads * o.ranksPerThread);
        FlexOptions f = o.flex;
        if (f.fromEnv) {
            require(o.threads == 1 && o.ranksPerThread == 1, "-t and -g: must be 1 (or absent) with --from-env: each "
                    + "process is one rank, got -t " + o.threads + " -g " + o.ranksPerThread);
            o.launch = io.flexlink.bootstrap.LaunchEnv.parse(o.environment);
        }
        split(o);
        require(o.iters >= 1, "-n: at least one iteration is needed, got " + o.iters);
        require(o.aggIters >= 1, "-m: at least one call per iteration is needed, got " + o.aggIters);
        require(o.warmup >= 0, "-w: must not be negative, got " + o.warmup);
        require(o.cycles >= 0, "-N: must be 0 (until interrupted) or a count of cycles, got " + o.cycles);
        require(o.check >= 0, "-c: the number of checked calls must not be negative, got " + o.check);
        require(o.blocking >= 0 && o.blocking <= 3, "-z: must be 0, 1, 2 or 3, got " + o.blocking);
        require(o.average >= 0 && o.average <= 3, "-a: must be 0 (rank 0), 1 (average), 2 (min) or 3 (max), got "
                + o.average);
        require(o.perIter == 0 || o.perIter == 1, "-I: must be 0 or 1, got " + o.perIter);
        require(o.reportCputime == 0 || o.reportCputime == 1, "-C: must be 0 or 1, got " + o.reportCputime);
        require(o.perIterSkip >= 0 && o.perIterSkip < o.iters, "-K: must be between 0 and -n - 1 = " + (o.iters - 1)
                + ", got " + o.perIterSkip);
        require(o.perIterSkip == 0 || o.perIter == 1, "-K: needs -I 1");
        require(o.timeout >= 0, "-T: must not be negative, got " + o.timeout);
        graphs(o);
        require(o.unalign >= 0 && o.unalign <= 1 << 20, "-u: must be between 0 and 1048576 elements, got " + o.unalign);
        sizes(o);
        String b = f.backend.toLowerCase(Locale.ROOT);
        require(b.equals("auto") || b.equals("host") || b.equals("cuda"),
                "--backend: '" + f.backend + "' is not one of auto|host|cuda");
        f.backend = b;
        if (f.share != null) {
            shares(f.share);
        }
        if (f.gate != null) {
            require(f.baseline, "--gate needs --baseline");
            Gate.parse(f.gate);
        }
        String minBw = o.environment.get("NCCL_TESTS_MIN_BW");
        if (minBw != null) {
            try {
                o.minAverageBusBw = Double.parseDouble(minBw.trim());
            } catch (NumberFormatException e) {
                o.minAverageBusBw = Double.NaN;
            }
            require(o.minAverageBusBw >= 0 && o.minAverageBusBw < Double.POSITIVE_INFINITY,
                    "NCCL_TESTS_MIN_BW: '" + minBw + "' is not a bandwidth in GB/s");
        }
        validateRoot(o);
        if (o.collective.needsPowerOfTwoRanks()) {
            int n = o.commSize();
            require(n > 0 && (n & (n - 1)) == 0, o.collective.testName() + ": " + n + " ranks" + perSplit(o)
                    + " is not a power of two (its exchange pairs rank with rank ^ mask over log2(n) rounds); run it on "
                    + "1, 2, 4, 8, ... ranks");
        }
        writable("--json", f.json);
        writable("--plot", f.plot);
    }

    /** The root must be a rank of the communicator (--from-env learns its size from the environment). */
    private static void validateRoot(PerfOptions o) {
        require(o.root >= -1 && o.root < o.commSize(), "-r: root " + o.root + " is not a rank of " + o.commSize()
                + perSplit(o) + " (or all)");
    }

    /** " per sub-communicator (NCCL_TESTS_SPLIT=...)" when the ranks are split, else nothing. */
    private static String perSplit(PerfOptions o) {
        return o.layout.split == null ? "" : " per sub-communicator (" + o.layout.split.setting() + ")";
    }

    /** NCCL_TESTS_SPLIT(_MASK): each rank's sub-communicator (the run's and the baselines' alike). */
    private static void split(PerfOptions o) {
        TestsSplit split = TestsSplit.fromEnvironment(o.environment);
        o.layout = split == null ? RankLayout.whole(o.worldSize()) : RankLayout.split(split, o.worldSize());
    }

    private static void refuseMissing(PerfOptions o) {
        require(o.register >= 0 && o.register <= 2, "-R: must be 0, 1 (local) or 2 (symmetric), got " + o.register);
        if (o.register == 2) {
            throw MissingFeature.SYMMETRIC_REGISTRATION.refusal();
        }
    }

    /**
     * -G: a count of launches; where nccl-tests turns -I and -z 3 off with -G (and -z 1 and 2 would wait on
     * a stream being captured), flexlink-perf refuses them, so that what runs is what was asked for.
     * Whether the backend's streams can capture is known once they exist ({@link GraphCapture#requireCapture}).
     */
    private static void graphs(PerfOptions o) {
        require(o.graphLaunches >= 0, "-G: must not be negative, got " + o.graphLaunches);
        if (o.graphLaunches == 0) {
            return;
        }
        require(o.perIter == 0, "-I: per-iteration timing is incompatible with CUDA graph mode (-G " + o.graphLaunches
                + "): the iterations run inside one graph; use -I 0 (nccl-tests turns -I off with -G)");
        require(o.blocking == 0, "-z " + o.blocking + ": blocking waits are incompatible with CUDA graph mode (-G "
                + o.graphLaunches + "): a captured stream cannot be waited for; use -z 0");
    }

    private static void sizes(PerfOptions o) {
        require(o.stepFactor >= 1, "-f: must be at least 1, got " + o.stepFactor);
        require(o.minBytes <= o.maxBytes, "-b " + o.minBytes + " is larger than -e " + o.maxBytes);
        if (o.stepFactor > 1) {
            require(o.minBytes > 0, "-b: must be positive with -f");
        } else {
            require(o.stepBytes > 0 || o.minBytes == o.maxBytes, "-i: must be positive");
        }
    }

    /** -d: a comma list of NCCL type names, or all; an empty entry is an error. */
    static List<DataType> types(String value) {
        if (value.trim().equalsIgnoreCase("all")) {
            return Arrays.asList(DataType.values());
        }
        List<DataType> out = new ArrayList<>();
        for (String t : entries("-d", value)) {
            DataType d = DataType.parse(t);
            if (!out.contains(d)) {
                out.add(d);
            }
        }
        return out;
    }

    /** -o: a comma list of operations, or all (the five built-ins and mulsum, as nccl-tests' all). */
    static List<PerfOp> ops(String value) {
        if (value.trim().equalsIgnoreCase("all")) {
            return Arrays.asList(PerfOp.values());
        }
        List<PerfOp> out = new ArrayList<>();
        for (String t : entries("-o", value)) {
            PerfOp op = PerfOp.parse(t);
            if (!out.contains(op)) {
                out.add(op);
            }
        }
        return out;
    }

    /** --share: auto, or path=fraction entries, none empty and no path twice (the configuration parses the rest). */
    static void shares(String value) {
        require(!value.isBlank(), "--share: empty (give auto or path=fraction entries, e.g. pcie=0.25)");
        if (value.trim().equalsIgnoreCase("auto")) {
            return;
        }
        Set<String> seen = new HashSet<>();
        for (String e : entries("--share", value)) {
            String path = e.contains("=") ? e.substring(0, e.indexOf('=')).trim() : e;
            require(seen.add(path.toLowerCase(Locale.ROOT)), "--share: path '" + path + "' is given twice in '"
                    + value + "'");
        }
    }

    private static List<String> entries(String option, String value) {
        List<String> out = new ArrayList<>();
        for (String t : value.split(",", -1)) {
            require(!t.isBlank(), option + ": empty entry in '" + value + "'");
            out.add(t.trim());
        }
        return out;
    }

    /**
     * A report file must be writable before the run starts, not found unwritable after it: its folder is
     * created, and a file that does not exist yet is created and removed again.
     */
    static void writable(String option, Path file) {
        if (file == null) {
            return;
        }
        Path abs = file.toAbsolutePath();
        require(!Files.isDirectory(abs), option + ": " + file + " is a directory");
        try {
            if (abs.getParent() != null) {
                Files.createDirectories(abs.getParent());
            }
            if (Files.exists(abs)) {
                require(Files.isRegularFile(abs) && Files.isWritable(abs), option + ": " + file + " cannot be written");
            } else {
                Files.delete(Files.createFile(abs));
            }
        } catch (IOException | SecurityException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, option + ": " + file + " cannot be written ("
                    + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
        }
    }

    static void require(boolean ok, String message) {
        if (!ok) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, message);
        }
    }
}
