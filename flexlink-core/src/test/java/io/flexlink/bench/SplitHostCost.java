package io.flexlink.bench;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.GroupCalls;
import io.flexlink.testing.PathStreams;
import io.flexlink.testing.ProbeCall;
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
        ProbeCall p = ProbeCall.parse(args);
        int ranks = p.ranks();
        int calls = args.length > 4 ? Integer.parseInt(args[4]) : 2000;
        FlexLinkConfig config = p.config().set(FlexLinkConfig.TIMEOUT, "0").build();
        try (HostBackend host = new HostBackend(config)) {
            Backend dropping = new PathStreams(host, PathStreams.Mode.DROP);
            GroupCalls group = p.group(host, p.communicators(dropping, config));
            double[] t = group.time(Integer.getInteger("warmup", 3000), calls, () -> { });
            Arrays.sort(t);
            System.out.println(String.format(Locale.ROOT, "%s %s per rank, %d ranks, chunk %s: %.1f us per call, %.1f "
                    + "per rank (median of %d; operations dropped)", p.collective(), args[1], ranks, p.chunk(), t[calls / 2],
                    t[calls / 2] / ranks, calls));
            group.close();
        }
    }
}
