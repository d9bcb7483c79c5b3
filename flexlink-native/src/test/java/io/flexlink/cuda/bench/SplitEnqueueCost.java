package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.testing.GroupCalls;
import io.flexlink.testing.PathStreams;
import java.util.Arrays;
import java.util.Locale;

/**
 * Host time of enqueueing one split collective from one thread through the public API: {@code groupStart},
 * one call per rank, {@code groupEnd}, nothing synchronized inside (the streams are synchronized between
 * calls, untimed). Median of {@code reps} calls after {@code warmup} calls (system property, default 3000, so
 * that the engine's Java code runs fully compiled; the 5 of earlier figures left much of it uncompiled).
 * Sizes as nccl-tests counts them (AllGather: the receive buffer, ReduceScatter: the send buffer). Several
 * ranks on one GPU run the PCIe path alone.
 * Usage: {@code SplitEnqueueCost reps chunk enqueueThread coll:size:ranks:share[:warmup] ...} (a row's own warm-up
 * calls, else {@code warmup}: the JIT's work is done once per JVM, so later rows of large sizes need few); with the
 * system property
 * {@code profile=true}, the calling thread's stack is sampled ({@link StackSampler}) while it enqueues; with
 * {@code timed=true}, each operation on the auxiliary paths' streams is timed ({@link PathStreams}); with
 * {@code gated=true}, every rank's stream waits on a host word until the whole group is enqueued, so that no
 * path work runs while the thread enqueues. The last column: from the group's start until every stream is done.
 */
public final class SplitEnqueueCost {
    private SplitEnqueueCost() {
    }

    public static void main(String[] args) {
        int reps = Integer.parseInt(args[0]);
        String chunk = args[1];
        String thread = args[2];
        System.out.println("# host enqueue per call (groupStart, a call per rank, groupEnd), median of " + reps
                + ", chunk " + chunk + ", flexlink.enqueueThread=" + thread);
        System.out.println("# collective      size   ranks share   per call us   per rank us   min us  to end us"
                + (Boolean.getBoolean("gated") ? " (each group held on a host gate until enqueued)" : ""));
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .build())) {
            for (int a = 3; a < args.length; a++) {
                String[] f = args[a].split(":");
                Collective c = Collective.valueOf(f[0].toUpperCase(Locale.ROOT));
                long size = ByteSizes.parse(f[1]);
                int ranks = Integer.parseInt(f[2]);
                String share = f[3];
                int warmup = f.length > 4 ? Integer.parseInt(f[4]) : Integer.getInteger("warmup", 3000);
                FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                        .set(FlexLinkConfig.SHARE, ranks == 1 ? "pcie=" + share : "auto")
                        .set(FlexLinkConfig.CHUNK_BYTES, chunk).set(FlexLinkConfig.ENQUEUE_THREAD, thread)
                        .set(FlexLinkConfig.TUNING_CACHE, "off").build();
                double[] t = measure(backend, config, c, size, ranks, reps, warmup);
                System.out.println(String.format(Locale.ROOT, "%-15s %6s %6d %6s %12.1f %12.1f %8.1f %10.1f", c, f[1],
                        ranks, ranks == 1 ? share : "all", t[0], t[0] / ranks, t[1], t[2]));
            }
        }
    }

    static double[] measure(CudaBackend cuda, FlexLinkConfig config, Collective c, long size, int ranks, int reps,
                            int warmup) {
        PathStreams timed = Boolean.getBoolean("timed") ? new PathStreams(cuda, PathStreams.Mode.TIME) : null;
        io.flexlink.runtime.Backend backend = timed != null ? timed : cuda;
        if (timed != null) {
            // the watchdog thread's polls of the same streams are not the call's cost (its thread's name, Watchdog)
            timed.countOnly(t -> !t.getName().equals("flexlink-watchdog"));
        }
        int[] devices = new int[ranks];
        Communicator[] comms = FlexLink.initAll(backend, config, devices);
        long perRank = c == Collective.ALL_GATHER || c == Collective.REDUCE_SCATTER ? size / ranks : size;
        GroupCalls group = new GroupCalls(backend, comms, c, perRank / 4, 0).fill(backend, (byte) 1);
        StackSampler sampler = Boolean.getBoolean("profile")
                ? new StackSampler(Thread.currentThread(), "org.bytedeco.cuda.global.cudart.cudaStreamSynchronize") : null;
        double[] whole = new double[reps];
        HostGate gate = Boolean.getBoolean("gated") ? new HostGate(cuda) : null;
        double[] t = group.time(warmup, reps, () -> {
            if (timed != null) {
                timed.reset();
            }
        }, gate == null ? Runnable::run : body -> gate.hold(body, group.streams()), whole);
        if (gate != null) {
            gate.close();
        }
        if (sampler != null) {
            sampler.close();
        }
        group.close();
        double mean = Arrays.stream(t).sum() / reps;
        Arrays.sort(t);
        if (timed != null) {
            timed.printTimes((long) reps * ranks, mean / ranks);
        }
        Arrays.sort(whole);
        return new double[] {t[reps / 2], t[0], whole[reps / 2]};
    }
}
