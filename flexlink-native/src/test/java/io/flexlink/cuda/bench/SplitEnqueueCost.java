package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
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
 * Usage: {@code SplitEnqueueCost reps chunk enqueueThread coll:size:ranks:share ...}; with the system property
 * {@code profile=true}, the calling thread's stack is sampled ({@link StackSampler}) while it enqueues; with
 * {@code timed=true}, each operation on the auxiliary paths' streams is timed ({@link PathStreams}).
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
        System.out.println("# collective      size   ranks share   per call us   per rank us   min us");
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .build())) {
            for (int a = 3; a < args.length; a++) {
                String[] f = args[a].split(":");
                Collective c = Collective.valueOf(f[0].toUpperCase(Locale.ROOT));
                long size = ByteSizes.parse(f[1]);
                int ranks = Integer.parseInt(f[2]);
                String share = f[3];
                FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                        .set(FlexLinkConfig.SHARE, ranks == 1 ? "pcie=" + share : "auto")
                        .set(FlexLinkConfig.CHUNK_BYTES, chunk).set(FlexLinkConfig.ENQUEUE_THREAD, thread)
                        .set(FlexLinkConfig.TUNING_CACHE, "off").build();
                double[] t = measure(backend, config, c, size, ranks, reps);
                System.out.println(String.format(Locale.ROOT, "%-15s %6s %6d %6s %12.1f %12.1f %8.1f", c, f[1], ranks,
                        ranks == 1 ? share : "all", t[0], t[0] / ranks, t[1]));
            }
        }
    }

    static double[] measure(CudaBackend cuda, FlexLinkConfig config, Collective c, long size, int ranks, int reps) {
        PathStreams timed = Boolean.getBoolean("timed") ? new PathStreams(cuda, PathStreams.Mode.TIME) : null;
        io.flexlink.runtime.Backend backend = timed != null ? timed : cuda;
        int[] devices = new int[ranks];
        Communicator[] comms = FlexLink.initAll(backend, config, devices);
        RuntimeStream[] streams = new RuntimeStream[ranks];
        DeviceMemory[] send = new DeviceMemory[ranks];
        DeviceMemory[] recv = new DeviceMemory[ranks];
        long perRank = c == Collective.ALL_GATHER || c == Collective.REDUCE_SCATTER ? size / ranks : size;
        long count = perRank / 4;
        for (int r = 0; r < ranks; r++) {
            streams[r] = backend.createStream(0, "user" + r);
            send[r] = backend.allocate(0, c == Collective.REDUCE_SCATTER ? size : perRank);
            recv[r] = backend.allocate(0, c == Collective.ALL_GATHER ? size : perRank);
            backend.fill(send[r].address(), send[r].byteSize(), (byte) 1);
        }
        double[] t = new double[reps];
        StackSampler sampler = Boolean.getBoolean("profile")
                ? new StackSampler(Thread.currentThread(), "org.bytedeco.cuda.global.cudart.cudaStreamSynchronize") : null;
        for (int i = -Integer.getInteger("warmup", 3000); i < reps; i++) {
            if (i == 0 && timed != null) {
                timed.reset();
            }
            long t0 = System.nanoTime();
            FlexLink.groupStart();
            for (int r = 0; r < ranks; r++) {
                long s = send[r].address();
                long d = recv[r].address();
                switch (c) {
                    case ALL_REDUCE: comms[r].allReduce(s, d, count, DataType.FLOAT32, ReduceOp.SUM, streams[r]); break;
                    case ALL_GATHER: comms[r].allGather(s, d, count, DataType.FLOAT32, streams[r]); break;
                    case REDUCE_SCATTER:
                        comms[r].reduceScatter(s, d, count, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
                        break;
                    default: comms[r].broadcast(s, d, count, DataType.FLOAT32, 0, streams[r]);
                }
            }
            FlexLink.groupEnd();
            long t1 = System.nanoTime();
            for (RuntimeStream s : streams) {
                s.synchronize();
            }
            if (i >= 0) {
                t[i] = (t1 - t0) / 1e3;
            }
        }
        if (sampler != null) {
            sampler.close();
        }
        for (int r = 0; r < ranks; r++) {
            comms[r].close();
            streams[r].close();
            send[r].close();
            recv[r].close();
        }
        double mean = Arrays.stream(t).sum() / reps;
        Arrays.sort(t);
        if (timed != null) {
            timed.printTimes((long) reps * ranks, mean / ranks);
        }
        return new double[] {t[reps / 2], t[0]};
    }
}
