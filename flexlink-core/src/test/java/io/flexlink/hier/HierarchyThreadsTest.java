package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Emulated nodes by thread, in one process: each rank's thread sets its own {@code flexlink.nodeId},
 * {@code FlexLink.initRank} makes hierarchical communicators (node communicators over FlexLink's paths,
 * TCP rails between the nodes), and every collective gives NCCL's exact results, bit-identical on every
 * rank of every node.
 */
class HierarchyThreadsTest {
    static final FlexLinkConfig BASE = FlexLinkConfig.builder()
            .set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "16K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();

    /** {@code nodes × perNode} ranks, node-major unless {@code roundRobin}; rank r on device r. */
    static Communicator[] make(HostBackend backend, int nodes, int perNode, boolean roundRobin) throws Exception {
        return make(backend, BASE, nodes, perNode, roundRobin);
    }

    static Communicator[] make(HostBackend backend, FlexLinkConfig base, int nodes, int perNode, boolean roundRobin)
            throws Exception {
        return EmulatedNodes.make(backend, base, FlexLink.getUniqueId(), nodes, perNode, roundRobin, rank -> { });
    }

    static void closeAll(Communicator[] comms) {
        for (Communicator c : comms) {
            c.close();
        }
    }

    @Test
    void twoNodesOfTwoRanksGiveExactResultsForEveryCollective() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            Communicator[] comms = make(backend, 2, 2, false);
            HierarchicalCommunicator h = assertInstanceOf(HierarchicalCommunicator.class, comms[3]);
            assertEquals(3, h.rank());
            assertEquals(4, h.size());
            try (CollectiveHarness harness = new CollectiveHarness(backend, comms)) {
                long seed = 11;
                for (Collective c : Collective.collectives()) {
                    for (long count : new long[] {1, 3, 9_001, 40_000}) {
                        for (boolean inPlace : new boolean[] {false, true}) {
                            int root = (int) (count % 4);
                            CollectiveHarness.Outcome o = harness.run(c, DataType.FLOAT32, ReduceOp.SUM, count, root,
                                    inPlace, seed++);
                            assertEquals(0, o.wrong, c + " count " + count + (inPlace ? " in place" : "") + ": " + o);
                        }
                    }
                }
                for (DataType t : new DataType[] {DataType.INT32, DataType.FLOAT16, DataType.UINT8, DataType.FLOAT64}) {
                    for (ReduceOp op : ReduceOp.values()) {
                        for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.REDUCE_SCATTER,
                                Collective.REDUCE}) {
                            CollectiveHarness.Outcome o = harness.run(c, t, op, 5_003, 2, false, seed++);
                            assertEquals(0, o.wrong, c + " " + t + " " + op + ": " + o);
                        }
                    }
                }
            }
            CommStats stats = comms[0].stats();
            CommStats.Hierarchy layout = stats.hierarchy();
            assertNotNull(layout, stats.toString());
            assertEquals("nodes 2 × ranks 2", layout.layout());
            assertEquals("TCP ring", layout.rail());
            long pcie = stats.paths().stream().filter(p -> p.path().equals("pcie")).mapToLong(p -> p.bytes()).sum();
            long rail = layout.stages().stream().filter(p -> p.path().equals("inter")).mapToLong(p -> p.bytes()).sum();
            assertTrue(pcie > 0, "the node's PCIe path carried bytes: " + stats);
            assertTrue(rail > 0, "the rail carried bytes: " + stats);
            for (CommStats.PathTotals stage : layout.stages()) {
                assertTrue(stage.calls() > 0 && stage.bytes() > 0, "stage " + stage);
                assertTrue(stage.timedCalls() > 0 && stage.seconds() > 0, "stage timed: " + stage);
            }
            closeAll(comms);
        }
    }

    @Test
    void roundRobinPlacementAndThreeNodesOfThreeRanks() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            for (boolean roundRobin : new boolean[] {false, true}) {
                Communicator[] comms = make(backend, 3, 3, roundRobin);
                try (CollectiveHarness harness = new CollectiveHarness(backend, comms)) {
                    for (Collective c : Collective.collectives()) {
                        CollectiveHarness.Outcome o = harness.run(c, DataType.INT64, ReduceOp.AVG, 7_001, 4, false, 3);
                        assertEquals(0, o.wrong, c + (roundRobin ? " round-robin" : "") + ": " + o);
                        o = harness.run(c, DataType.BFLOAT16, ReduceOp.MAX, 2_048, 8, true, 4);
                        assertEquals(0, o.wrong, c + " in place" + (roundRobin ? " round-robin" : "") + ": " + o);
                    }
                }
                closeAll(comms);
            }
        }
    }

    @Test
    void aLargeAllReduceOverlapsItsPiecesStagesAndStaysExact() throws Exception {
        FlexLinkConfig small = BASE.with(FlexLinkConfig.HIER_PIECE_BYTES, "16K");
        try (HostBackend backend = new HostBackend(small)) {
            Communicator[] comms = make(backend, small, 2, 2, false);
            try (CollectiveHarness harness = new CollectiveHarness(backend, comms)) {
                long seed = 40;
                for (long count : new long[] {40_001, 16_384, 9_000}) { // 8 pieces and a tail, 4 pieces, 2 pieces
                    for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG}) {
                        for (DataType t : new DataType[] {DataType.FLOAT32, DataType.INT32}) {
                            for (boolean inPlace : new boolean[] {false, true}) {
                                CollectiveHarness.Outcome o = harness.run(Collective.ALL_REDUCE, t, op, count, 0,
                                        inPlace, seed++);
                                assertEquals(0, o.wrong, count + " " + t + " " + op + (inPlace ? " in place" : "")
                                        + ": " + o);
                            }
                        }
                    }
                }
            }
            CommStats.Hierarchy layout = comms[2].stats().hierarchy();
            assertTrue(layout.stages().get(1).timedCalls() > 0 && layout.stages().get(1).seconds() > 0,
                    "the rails' busy span is timed: " + layout);
            closeAll(comms);
        }
    }

    @Test
    void nodesOfOneRankUseTheRailAlone() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            Communicator[] comms = make(backend, 3, 1, false);
            try (CollectiveHarness harness = new CollectiveHarness(backend, comms)) {
                for (Collective c : Collective.collectives()) {
                    CollectiveHarness.Outcome o = harness.run(c, DataType.INT32, ReduceOp.AVG, 3_001, 2, false, 9);
                    assertEquals(0, o.wrong, c + ": " + o);
                }
            }
            CommStats stats = comms[1].stats();
            assertEquals(List.of(), stats.paths(), "no node communicator, so no node paths: " + stats);
            assertEquals("nodes 3 × ranks 1", stats.hierarchy().layout());
            CommStats.PathTotals inter = stats.hierarchy().stages().get(1);
            assertEquals("inter", inter.path());
            assertEquals(Collective.collectives().size(), inter.calls(), "every collective went over the rail");
            assertEquals(0, stats.hierarchy().stages().get(0).calls(), "and nothing inside a node");
            closeAll(comms);
        }
    }

    @Test
    void nodesOfDifferentSizesFailAtCreationOnEveryRank() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            UniqueId id = FlexLink.getUniqueId();
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<Future<Communicator>> fs = new ArrayList<>();
            String[] nodes = {"a", "a", "b"};
            for (int r = 0; r < 3; r++) {
                int rank = r;
                FlexLinkConfig c = BASE.with(FlexLinkConfig.NODE_ID, nodes[r]);
                fs.add(pool.submit(() -> FlexLink.initRank(backend, c, 3, id, rank, rank)));
            }
            for (Future<Communicator> f : fs) {
                java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                        java.util.concurrent.ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
                io.flexlink.FlexLinkException fe = assertInstanceOf(io.flexlink.FlexLinkException.class, e.getCause());
                assertEquals(io.flexlink.Result.INVALID_USAGE, fe.result());
                assertTrue(fe.getMessage().contains("node 'a' has 2") && fe.getMessage().contains("node 'b' has 1"),
                        fe.getMessage());
            }
            pool.shutdown();
            assertEquals(0, backend.liveStreams(), "nothing left behind");
        }
    }

    @Test
    void badCallsAndGroupsAreRefusedBeforeAnythingIsEnqueued() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            Communicator[] comms = make(backend, 2, 2, false);
            RuntimeStream s = backend.createStream(comms[0].device(), "bad");
            DeviceMemory m = backend.allocate(comms[0].device(), 4096);
            io.flexlink.FlexLinkException root = org.junit.jupiter.api.Assertions.assertThrows(
                    io.flexlink.FlexLinkException.class,
                    () -> comms[0].broadcast(m, m, 16, DataType.FLOAT32, 4, s));
            assertEquals(io.flexlink.Result.INVALID_ARGUMENT, root.result());
            assertTrue(root.getMessage().contains("root: 4"), root.getMessage());
            io.flexlink.FlexLinkException size = org.junit.jupiter.api.Assertions.assertThrows(
                    io.flexlink.FlexLinkException.class,
                    () -> comms[0].allGather(m, m, 512, DataType.FLOAT32, s));
            assertTrue(size.getMessage().contains("recvbuff"), size.getMessage());
            FlexLink.groupStart();
            io.flexlink.FlexLinkException group;
            try {
                group = org.junit.jupiter.api.Assertions.assertThrows(io.flexlink.FlexLinkException.class,
                        () -> comms[0].allReduce(m, m, 16, DataType.FLOAT32, ReduceOp.SUM, s));
                assertEquals(io.flexlink.Result.INVALID_USAGE, group.result());
                assertTrue(group.getMessage().contains("cannot be grouped"), group.getMessage());
            } finally {
                // the refused call cancelled its group, as NCCL's groups are atomic
                io.flexlink.FlexLinkException end = org.junit.jupiter.api.Assertions.assertThrows(
                        io.flexlink.FlexLinkException.class, FlexLink::groupEnd);
                assertTrue(end.getMessage().contains("cancelled"), end.getMessage());
            }
            assertTrue(s.isIdle(), "nothing was enqueued");
            assertEquals(io.flexlink.Result.SUCCESS, comms[0].getAsyncError(), "and the communicator is fine");
            s.close();
            m.close();
            closeAll(comms);
        }
    }

    /**
     * Send and Recv between the two ranks of each node deliver the peer's bytes; this rank itself outside a group
     * is refused with INVALID_USAGE before anything is enqueued (between nodes: HierarchyCrossNodeTransfersTest).
     */
    @Test
    void sendAndRecvInsideANodeAndToItselfOutsideAGroupRefused() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            Communicator[] comms = make(backend, 2, 2, false);
            int n = comms.length;
            int count = 10_000; // 40 KB: several chunks of both paths of the node
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] send = new DeviceMemory[n];
            DeviceMemory[] recv = new DeviceMemory[n];
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(comms[r].device(), "p2p" + r);
                send[r] = backend.allocate(comms[r].device(), 4L * count);
                recv[r] = backend.allocate(comms[r].device(), 4L * count);
                int[] v = new int[count];
                for (int i = 0; i < count; i++) {
                    v[i] = r * 1_000_003 + i;
                }
                java.nio.ByteBuffer b = java.nio.ByteBuffer.allocateDirect(4 * count).order(java.nio.ByteOrder.nativeOrder());
                b.asIntBuffer().put(v);
                backend.upload(send[r].address(), b);
                backend.fill(recv[r].address(), 4L * count, (byte) 0x5A); // poisoned
            }
            ExecutorService pool = Executors.newFixedThreadPool(n);
            try {
                List<Future<?>> fs = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    int rank = r;
                    int peer = r ^ 1; // ranks 0,1 on node a; 2,3 on node b
                    fs.add(pool.submit(() -> {
                        if (rank % 2 == 0) {
                            comms[rank].send(send[rank], count, DataType.INT32, peer, streams[rank]);
                            comms[rank].recv(recv[rank], count, DataType.INT32, peer, streams[rank]);
                        } else {
                            comms[rank].recv(recv[rank], count, DataType.INT32, peer, streams[rank]);
                            comms[rank].send(send[rank], count, DataType.INT32, peer, streams[rank]);
                        }
                        streams[rank].synchronize();
                        return null;
                    }));
                }
                for (Future<?> f : fs) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdown();
            }
            for (int r = 0; r < n; r++) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.allocateDirect(4 * count).order(java.nio.ByteOrder.nativeOrder());
                backend.download(b, recv[r].address());
                int peer = r ^ 1;
                for (int i = 0; i < count; i++) {
                    assertEquals(peer * 1_000_003 + i, b.getInt(4 * i), "rank " + r + " element " + i);
                }
            }
            long pcie = comms[0].stats().paths().stream().filter(p -> p.path().equals("pcie"))
                    .mapToLong(p -> p.bytes()).sum();
            assertTrue(pcie > 0, "the node's transfers were split onto its PCIe path: " + comms[0].stats());
            long before = backend.enqueuedOps(streams[0]);
            for (int[] bad : new int[][] {{0}}) {
                io.flexlink.FlexLinkException e = org.junit.jupiter.api.Assertions.assertThrows(
                        io.flexlink.FlexLinkException.class,
                        () -> comms[0].send(send[0], count, DataType.INT32, bad[0], streams[0]));
                assertEquals(io.flexlink.Result.INVALID_USAGE, e.result(), e.getMessage());
                assertTrue(e.getMessage().contains("peer: rank " + bad[0]), e.getMessage());
            }
            assertEquals(before, backend.enqueuedOps(streams[0]), "nothing was enqueued by the refused calls");
            assertEquals(io.flexlink.Result.SUCCESS, comms[0].getAsyncError());
            for (int r = 0; r < n; r++) {
                streams[r].close();
                send[r].close();
                recv[r].close();
            }
            closeAll(comms);
        }
    }

    @Test
    void inexactFloatSumsAreBitIdenticalOnEveryRank() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            Communicator[] comms = make(backend, 2, 2, false);
            int n = comms.length;
            int count = 50_001;
            Random random = new Random(7);
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] bufs = new DeviceMemory[n];
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(comms[r].device(), "t" + r);
                bufs[r] = backend.allocate(comms[r].device(), count * 4L);
                ByteBuffer in = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
                for (int i = 0; i < count; i++) {
                    in.putFloat((float) (random.nextGaussian() * Math.pow(10, random.nextInt(12) - 6)));
                }
                in.flip();
                backend.upload(bufs[r].address(), in);
            }
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PROD}) {
                for (int r = 0; r < n; r++) {
                    comms[r].allReduce(bufs[r], bufs[r], count, DataType.FLOAT32, op, streams[r]);
                }
                byte[] first = null;
                for (int r = 0; r < n; r++) {
                    streams[r].synchronize();
                    ByteBuffer out = ByteBuffer.allocateDirect(count * 4);
                    backend.download(out, bufs[r].address());
                    byte[] bytes = new byte[count * 4];
                    out.get(bytes);
                    if (first == null) {
                        first = bytes;
                    } else {
                        assertArrayEquals(first, bytes, op + ": rank " + r + " differs from rank 0");
                    }
                }
            }
            for (int r = 0; r < n; r++) {
                streams[r].close();
                bufs[r].close();
            }
            closeAll(comms);
        }
    }
}
