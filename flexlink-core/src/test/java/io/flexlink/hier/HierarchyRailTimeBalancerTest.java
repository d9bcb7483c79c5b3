package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Two emulated nodes of two ranks with the node balancer on: the rail stage's time, timed by the
 * hierarchy, reaches the node communicator's balancer and is agreed by the node's ranks: its decisions
 * are noted with it ({@code outside=}), on both ranks of both nodes.
 */
class HierarchyRailTimeBalancerTest {
    private static final int CALLS = 24;
    private static final long COUNT = 64 * 1024; // 256 KB per rank: below flexlink.hier.pieceBytes, not pipelined

    /** Every rank on its own thread (the node's balancer waits for its peers at each decision point). */
    private static List<String> drive(HostBackend backend, FlexLinkConfig config, UniqueId id, int rank) {
        FlexLinkConfig c = config.with(FlexLinkConfig.NODE_ID, "node-" + (char) ('a' + rank / 2));
        Communicator comm = FlexLink.initRank(backend, c, 4, id, rank, rank);
        RuntimeStream stream = backend.createStream(rank, "user.r" + rank);
        try (DeviceMemory send = backend.allocate(rank, COUNT * 4); DeviceMemory recv = backend.allocate(rank, COUNT * 4)) {
            backend.fill(send.address(), COUNT * 4, (byte) 1);
            for (int i = 0; i < CALLS; i++) {
                comm.allReduce(send, recv, COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
                stream.synchronize(); // the call's stage events are complete: the next call's start reads them
            }
            return comm.stats().history();
        } finally {
            comm.close();
            stream.close();
        }
    }

    @Test
    void theNodeBalancersDecisionsCarryTheAgreedRailTime() throws Exception {
        FlexLinkConfig config = FlexLinkConfig.builder()
                .set(FlexLinkConfig.EMULATE, "primary:2GB/s,pcie:1GB/s,rail:200MB/s")
                .set(FlexLinkConfig.CHUNK_BYTES, "16K").set(FlexLinkConfig.BALANCE_WINDOW, "2")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.INIT_TIMEOUT, "60s").build();
        try (HostBackend backend = new HostBackend(config)) {
            UniqueId id = FlexLink.getUniqueId();
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<List<String>>> fs = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    int rank = r;
                    fs.add(pool.submit(() -> drive(backend, config, id, rank)));
                }
                for (int r = 0; r < 4; r++) {
                    List<String> history = fs.get(r).get(5, TimeUnit.MINUTES);
                    assertTrue(history.stream().anyMatch(h -> h.contains("decided") && h.contains("outside=")),
                            "rank " + r + "'s node balancer decided with the rail's time: " + history);
                }
            } finally {
                pool.shutdown();
            }
        }
    }
}
