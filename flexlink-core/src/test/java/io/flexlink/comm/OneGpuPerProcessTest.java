package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankDevices;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.Paths;
import io.flexlink.testing.TransportAnswers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Processes that each see their own GPUs (CUDA_VISIBLE_DEVICES): each calls its GPU device 0, and each may see
 * another set of GPUs. Ranks tell devices apart by {@link io.flexlink.runtime.Backend#deviceKey}, not by
 * ordinal, so they keep NCCL's path (which refuses two ranks on one device); and they key the tuning table by
 * rank 0's fingerprint, so they start from the same shares. Each rank here has a backend of its own standing in
 * for its process: the host backend seen through a device key and a fingerprint of its own, with a primary
 * transport that refuses shared devices as NCCL's does.
 */
class OneGpuPerProcessTest {
    private final HostBackend host = new HostBackend(FlexLinkConfig.builder().build());
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<Communicator> made = new ArrayList<>();
    private final List<OneVisibleDevice> processes = new ArrayList<>();
    /** Each process's fingerprint of its links, by rank; null: the host backend's. */
    private String[] fingerprints;

    @AfterEach
    void close() {
        for (Communicator c : made) {
            c.close();
        }
        pool.shutdownNow();
        host.close();
    }

    /**
     * One process's view of the node: its only visible device is 0, whose key is {@code key}; its links'
     * fingerprint is the host backend's unless set.
     */
    static final class OneVisibleDevice extends ForwardingBackend {
        private final String key;
        /** The labels of the streams this process made. */
        final List<String> streams = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile String fingerprint;
        /** The process's hardware queues per device; the host backend's (unbounded) unless set. */
        volatile int queues;

        OneVisibleDevice(HostBackend host, String key) {
            super(host);
            this.key = key;
        }

        @Override
        public String fingerprint() {
            return fingerprint != null ? fingerprint : super.fingerprint();
        }

        @Override
        public io.flexlink.runtime.RuntimeStream createStream(int device, String label) {
            streams.add(label);
            return delegate().createStream(device, label);
        }

        @Override
        public String deviceKey(int device) {
            return key;
        }

        @Override
        public int streamQueues() {
            return queues > 0 ? queues : super.streamQueues();
        }

        @Override
        public PrimaryTransport primaryTransport() {
            return TransportAnswers.answering(delegate().primaryTransport(), "allowsSharedDevices", false);
        }

        @Override
        public void close() {
            // the host backend is closed by the test
        }
    }

    private FlexLinkConfig config = config("pcie=0.5", "off");
    /** Each process's hardware queues per device; 0: the host backend's. */
    private int queues;

    private static FlexLinkConfig config(String share, String tuningCache) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, share)
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.TUNING_CACHE, tuningCache).build();
    }

    /** Ranks each on device 0 of its own backend with the given key, made from a thread each. */
    private Communicator[] ranks(String... keys) throws Exception {
        UniqueId id = FlexLink.getUniqueId();
        int n = keys.length;
        List<Future<Communicator>> fs = new ArrayList<>();
        processes.clear();
        for (int r = 0; r < n; r++) {
            int rank = r;
            OneVisibleDevice process = new OneVisibleDevice(host, keys[rank]);
            processes.add(process);
            process.fingerprint = fingerprints == null ? null : fingerprints[rank];
            process.queues = queues;
            fs.add(pool.submit(() -> FlexLink.initRank(process, config, n, id, rank, 0)));
        }
        Communicator[] comms = new Communicator[n];
        for (int r = 0; r < n; r++) {
            comms[r] = fs.get(r).get(60, TimeUnit.SECONDS);
            made.add(comms[r]);
        }
        return comms;
    }

    @Test
    void ranksOnDevice0OfDifferentGpusKeepNcclsPathAndSplit() throws Exception {
        Communicator[] comms = ranks("0000:18:00.0", "0000:2a:00.0");
        for (Communicator c : comms) {
            assertEquals(List.of("primary", "pcie"), Paths.names(c), "both ranks call their GPU device 0");
        }
        CollectiveHarness.Outcome o = allReduce(comms, 7);
        assertTrue(o.bytes("primary") > 0 && o.bytes("pcie") > 0, "the call split: " + o);
    }

    /** One AllReduce of seeded data on {@code comms}, every element checked. */
    private CollectiveHarness.Outcome allReduce(Communicator[] comms, long seed) {
        try (CollectiveHarness h = new CollectiveHarness(host, comms)) {
            CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 1 << 14, 0,
                    false, seed);
            assertEquals(0, o.wrong, o.toString());
            return o;
        }
    }

    @Test
    void ranksWhoseKeysAreEqualShareOneGpuAndRunWithoutNccl() throws Exception {
        Communicator[] comms = ranks("0000:18:00.0", "0000:18:00.0");
        for (Communicator c : comms) {
            assertEquals(List.of("primary(off)", "pcie"), Paths.names(c), "one GPU, two ranks: NCCL would refuse");
        }
        CollectiveHarness.Outcome o = allReduce(comms, 8);
        assertTrue(o.bytes("primary(off)") == 0 && o.bytes("pcie") > 0, "the PCIe path carried it all: " + o);
    }

    /**
     * The PCIe path's local stream goes to ranks that share their GPU with at most one other
     * ({@code StagedPath.LOCAL_STREAM_RANKS_PER_DEVICE}; the host backend's queues are unbounded), counted by key: three processes on three GPUs, each
     * its device 0, get one each; three ranks on one GPU get none.
     */
    @Test
    void theLocalStreamFollowsTheKeys() throws Exception {
        ranks("0000:18:00.0", "0000:2a:00.0", "0000:3c:00.0");
        for (int r = 0; r < 3; r++) {
            assertTrue(processes.get(r).streams.contains("pcie.local.r" + r), processes.get(r).streams.toString());
        }
        ranks("0000:18:00.0", "0000:18:00.0", "0000:18:00.0");
        for (int r = 0; r < 3; r++) {
            List<String> s = processes.get(r).streams;
            assertTrue(s.contains("pcie.recv.r" + r) && !s.contains("pcie.local.r" + r), s.toString());
        }
    }

    /**
     * Two ranks of one GPU wait on each other's streams, so they get a local stream only where the device runs
     * twice their streams on queues of their own: not at CUDA's default of 8, at 16 and 32. A rank alone on its
     * GPU gets one at 8 (its streams wait on no stream of its device that a shared queue could hold back).
     */
    @Test
    void twoRanksOfOneGpuGetTheLocalStreamOnlyWhereTheQueuesHoldTheirStreams() throws Exception {
        for (int q : new int[] {8, 15, 16, 32}) {
            queues = q;
            Communicator[] comms = ranks("0000:18:00.0", "0000:18:00.0");
            for (int r = 0; r < 2; r++) {
                List<String> s = processes.get(r).streams;
                assertEquals(q >= 16, s.contains("pcie.local.r" + r), q + " queues: " + s);
            }
            CollectiveHarness.Outcome o = allReduce(comms, 10 + q);
            assertTrue(o.bytes("pcie") > 0, o.toString());
        }
        queues = 8;
        ranks("0000:18:00.0", "0000:2a:00.0");
        for (int r = 0; r < 2; r++) {
            assertTrue(processes.get(r).streams.contains("pcie.local.r" + r), processes.get(r).streams.toString());
        }
    }

    /**
     * Rank 0's process sees other GPUs than rank 1's, so their fingerprints differ; the tuning cache holds a
     * table for rank 0's. Both ranks start every channel from it: a rank that found it stale would probe while
     * rank 0 used the cached shares, and the two would split calls differently.
     */
    @Test
    void everyRankStartsFromRankZerosTuningTable(@TempDir java.nio.file.Path dir) throws Exception {
        config = config("auto", dir.toString());
        fingerprints = new String[] {"eight H200", "one H200"};
        // the cached channel's share is the one a probing channel starts from (0): the first call splits alike
        // either way, and only the stage tells whether a rank used the table
        io.flexlink.balance.TuningTable table = new io.flexlink.balance.TuningTable();
        table.put("all_reduce/64K", new double[] {0.0});
        OneVisibleDevice rankZero = new OneVisibleDevice(host, "0000:18:00.0");
        rankZero.fingerprint = fingerprints[0];
        String key = CommunicatorFactory.fingerprint(rankZero, config, 2, List.of("pcie"),
                io.flexlink.sync.EnqueueBudget.ONE_RANK_PER_THREAD);
        table.save(dir, key, io.flexlink.Version.VERSION);
        Communicator[] comms = ranks("0000:18:00.0", "0000:2a:00.0");
        allReduce(comms, 9);
        for (Communicator c : comms) {
            assertEquals("FINE", c.stats().stages().get("all_reduce/64K"), "restored on every rank: "
                    + c.stats().stages());
        }
    }

    @Test
    void sharingIsCountedByKeyNotByOrdinal() {
        // one process: the host backend's key is its ordinal's
        RankDevices byOrdinal = RankDevices.of(host, new int[] {0, 1, 0});
        assertEquals(2, byOrdinal.sharing(0));
        assertEquals(1, byOrdinal.sharing(1));
        assertTrue(byOrdinal.anyShared());
        assertEquals("host:1", byOrdinal.key(1));
        // three processes, each calling its GPU device 0, two of them the same GPU
        RankDevices exchanged = RankDevices.exchange(
                mine -> new byte[][] {mine.clone(), replaceKey(mine, "0000:2a:00.0"), replaceKey(mine, "0000:18:00.0")},
                new OneVisibleDevice(host, "0000:18:00.0"), 0);
        assertEquals(3, exchanged.size());
        for (int r = 0; r < 3; r++) {
            assertEquals(0, exchanged.ordinal(r));
        }
        assertEquals("0000:2a:00.0", exchanged.key(1));
        assertEquals(2, exchanged.sharing(0));
        assertEquals(1, exchanged.sharing(1));
        assertTrue(exchanged.anyShared());
        assertFalse(RankDevices.of(new OneVisibleDevice(host, "k"), new int[] {0}).anyShared());
    }

    /** {@code frame} (an ordinal, then a key) with {@code key} instead. */
    private static byte[] replaceKey(byte[] frame, String key) {
        byte[] k = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return java.nio.ByteBuffer.allocate(4 + k.length).put(frame, 0, 4).put(k).array();
    }
}
