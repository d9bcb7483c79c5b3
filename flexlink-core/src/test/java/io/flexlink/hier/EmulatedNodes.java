package io.flexlink.hier;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/** Ranks of emulated nodes (a node id per rank) created at once, one thread each, for the hierarchy tests. */
final class EmulatedNodes {
    private EmulatedNodes() {
    }

    /**
     * {@code nodes × perNode} ranks meeting at {@code id}, node-major unless {@code roundRobin}; rank r on device
     * r (modulo the devices); {@code onRankThread} runs on each rank's thread before its creation.
     */
    static Communicator[] make(Backend backend, FlexLinkConfig base, UniqueId id, int nodes, int perNode,
                               boolean roundRobin, IntConsumer onRankThread) throws Exception {
        int n = nodes * perNode;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<Communicator>> fs = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                int node = roundRobin ? r % nodes : r / perNode;
                FlexLinkConfig c = base.with(FlexLinkConfig.NODE_ID, "node-" + (char) ('a' + node));
                fs.add(pool.submit(() -> {
                    onRankThread.accept(rank);
                    return FlexLink.initRank(backend, c, n, id, rank, rank % backend.deviceCount());
                }));
            }
            Communicator[] comms = new Communicator[n];
            for (int r = 0; r < n; r++) {
                comms[r] = fs.get(r).get(60, TimeUnit.SECONDS);
            }
            return comms;
        } finally {
            pool.shutdown();
        }
    }
}
