package io.flexlink.bench;

import io.flexlink.config.FlexLinkConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** flexlink-perf's own options (nccl-tests has none of these): backend, paths, shares, baseline, reports. */
public final class FlexOptions {
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
            description = "Also time the backend's own collectives called directly (NCCL through bytedeco on CUDA, "
                    + "the host ring on the host backend) and FlexLink with its primary path alone, on the same "
                    + "buffers and streams, alternating with FlexLink: columns vs and prim.")
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

    @Option(names = {"-v", "--verbose"}, description = "Log FlexLink's INFO lines on stderr (e.g. why there is no GPU).")
    boolean verbose;

    @Option(names = "--from-env", description = "Run as one rank of a multi-process job, one process per rank, "
            + "from the launcher's variables (torchrun's RANK, WORLD_SIZE, LOCAL_RANK, or OpenMPI's, Slurm's, PMI's) "
            + "and MASTER_ADDR, MASTER_PORT (-t and -g must be 1): rank 0 prints the table, every process checks its "
            + "own results and exits with its own code; ranks on several nodes run hierarchically.")
    boolean fromEnv;

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
}
