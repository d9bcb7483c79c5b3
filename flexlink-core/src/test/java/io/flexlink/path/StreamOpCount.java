package io.flexlink.path;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.GroupCalls;
import io.flexlink.testing.PathStreams;
import io.flexlink.testing.ProbeCall;
import java.util.Map;
import java.util.TreeMap;

/**
 * How many stream operations the auxiliary paths enqueue per call and per rank, counted where the engine calls
 * the {@link RuntimeStream} interface: one {@code copyRows} is one operation (one cudaMemcpy2DAsync on CUDA),
 * one {@code memOps} batch one (one cuStreamBatchMemOp). The engine is the CUDA backend's, so the counts are
 * the CUDA backend's too; only the host backend executes them. Usage:
 * {@code StreamOpCount collective bytesPerRank ranks chunk [calls]} (ranks on one device, the PCIe path alone
 * with 2 ranks or more; one rank: NCCL's stand-in and PCIe with a share of 0.1).
 */
public final class StreamOpCount {
    private StreamOpCount() {
    }

    public static void main(String[] args) {
        ProbeCall p = ProbeCall.parse(args);
        int ranks = p.ranks();
        int calls = args.length > 4 ? Integer.parseInt(args[4]) : 3;
        FlexLinkConfig config = p.config().build();
        try (HostBackend host = new HostBackend(config)) {
            PathStreams counting = new PathStreams(host, PathStreams.Mode.COUNT);
            GroupCalls group = p.group(host, p.communicators(counting, config));
            for (int i = 0; i <= calls; i++) {
                if (i == 1) {
                    counting.reset(); // the first call set things up
                }
                group.enqueue();
                group.synchronize();
            }
            Map<String, Long> per = new TreeMap<>();
            long total = 0;
            for (Map.Entry<String, long[]> e : counting.byMethod().entrySet()) {
                if (PathStreams.isOperation(e.getKey())) {
                    per.put(e.getKey(), e.getValue()[0] / ((long) calls * ranks));
                    total += e.getValue()[0];
                }
            }
            System.out.printf("%s %d B per rank, %d ranks, chunk %s: %.1f stream operations per call per rank %s%n",
                    p.collective(), p.bytes(), ranks, p.chunk(), (double) total / ((long) calls * ranks), per);
            group.close();
        }
    }
}
