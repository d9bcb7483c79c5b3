package io.flexlink.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.PathStreams;
import io.flexlink.verify.Expected;
import java.util.Arrays;
import java.util.Locale;

/**
 * FlexLink's own host time in a split call, without any backend's enqueue cost: the auxiliary paths' streams
 * drop every operation (their queries are answered by real streams), so what is timed is the engine's Java
 * work between the operations: plan, balancer, chunk plans, counters, events. The part of a CUDA figure
 * ({@code SplitEnqueueCost}) that the stream operations do not explain. The results are garbage; only time
 * counts. Usage: {@code SplitHostCost collective bytesPerRank ranks chunk [calls]}, from flexlink-core with
 * the test classpath; median per call of the group of all ranks, one thread, after {@code warmup} calls
 * (system property, default 3000: at 8 ranks the JIT
 * has compiled the engine's code only by then).
 */
public final class SplitHostCost {
    private SplitHostCost() {
    }

    public static void main(String[] args) {
        Collective c = Collective.valueOf(args[0]);
        long bytes = ByteSizes.parse(args[1]);
        int ranks = Integer.parseInt(args[2]);
        String chunk = args[3];
        int calls = args.length > 4 ? Integer.parseInt(args[4]) : 2000;
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, ranks == 1 ? "primary,pcie" : "pcie")
                .set(FlexLinkConfig.SHARE, ranks == 1 ? "pcie=0.1" : "auto").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, chunk).set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.TIMEOUT, "0").build();
        try (HostBackend host = new HostBackend(config)) {
            Backend dropping = new PathStreams(host, PathStreams.Mode.DROP);
            Communicator[] comms = FlexLink.initAll(dropping, config, new int[ranks]);
            long count = bytes / 4;
            DeviceMemory[] in = new DeviceMemory[ranks];
            DeviceMemory[] out = new DeviceMemory[ranks];
            RuntimeStream[] s = new RuntimeStream[ranks];
            for (int r = 0; r < ranks; r++) {
                in[r] = host.allocate(0, 4 * Expected.inputCount(c, count, ranks));
                out[r] = host.allocate(0, 4 * Expected.outputCount(c, count, ranks));
                s[r] = host.createStream(0, "user.r" + r);
            }
            double[] t = new double[calls];
            for (int i = -Integer.getInteger("warmup", 3000); i < calls; i++) {
                long t0 = System.nanoTime();
                FlexLink.groupStart();
                for (int r = 0; r < ranks; r++) {
                    CollectiveHarness.enqueue(c, comms[r], in[r].address(), out[r].address(), count, DataType.FLOAT32,
                            ReduceOp.SUM, ranks - 1, s[r]);
                }
                FlexLink.groupEnd();
                long t1 = System.nanoTime();
                for (RuntimeStream x : s) {
                    x.synchronize();
                }
                if (i >= 0) {
                    t[i] = (t1 - t0) / 1e3;
                }
            }
            Arrays.sort(t);
            System.out.println(String.format(Locale.ROOT, "%s %s per rank, %d ranks, chunk %s: %.1f us per call, %.1f "
                    + "per rank (median of %d; operations dropped)", c, args[1], ranks, chunk, t[calls / 2],
                    t[calls / 2] / ranks, calls));
            for (int r = 0; r < ranks; r++) {
                comms[r].close();
                in[r].close();
                out[r].close();
                s[r].close();
            }
        }
    }
}
