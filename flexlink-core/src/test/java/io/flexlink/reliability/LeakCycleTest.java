package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.shm.ShmSegment;
import io.flexlink.testing.Bounded;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * 1000 create / run / close cycles of a 2-rank communicator (host ring + PCIe path, watchdog on; every
 * tenth cycle aborted before it is closed): off-heap memory (device and pinned), streams and threads
 * come back to where they were, checked every 100 cycles and at the end, with bounded waits for the
 * threads that are on their way out. Then 100 cycles of {@code initRank} on two threads meeting over the
 * TCP rendezvous, with file-backed staging, one creation in ten failing on one rank: no file is left
 * in the shared-memory directory after any cycle either.
 */
class LeakCycleTest {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final int CYCLES = 1000;

    @Test
    void thousandCreateRunCloseCycles() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TIMEOUT, "30s")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        int flexThreads = Bounded.flexlinkThreads().size();
        int jvmThreads = mx.getThreadCount();
        long start = System.nanoTime();
        try (HostBackend backend = new HostBackend(config)) {
            RankCheck[] ranks = new RankCheck[2];
            Communicator[] probe = FlexLink.initAll(backend, config, 0, 1);
            for (int r = 0; r < 2; r++) {
                ranks[r] = new RankCheck(backend, probe[r], "user.r" + r, 4096); // buffers and streams kept
            }
            for (Communicator c : probe) {
                c.close();
            }
            long buffers = backend.liveBytes();
            int userStreams = backend.liveStreams();
            int peakThreads = 0;
            for (int i = 1; i <= CYCLES; i++) {
                Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
                for (int r = 0; r < 2; r++) {
                    ranks[r].rebind(comms[r]);
                }
                // both ranks' parts are enqueued before either waits, as one thread driving two GPUs would
                long wrong = RankCheck.runAll(ranks, Collective.values()[i % 5], DataType.FLOAT32, ReduceOp.SUM,
                        2048 + i % 97, i % 2, i);
                assertEquals(0, wrong, "cycle " + i);
                peakThreads = Math.max(peakThreads, Bounded.flexlinkThreads().size());
                if (i % 10 == 0) {
                    comms[0].abort();
                    comms[1].abort();
                }
                for (Communicator c : comms) {
                    c.close();
                }
                if (i % 100 == 0 || i == CYCLES) {
                    int cycle = i;
                    assertEquals(buffers, backend.liveBytes(), () -> "off-heap bytes after cycle " + cycle);
                    assertEquals(userStreams, backend.liveStreams(), () -> "streams after cycle " + cycle);
                    Bounded.threadsBackTo(flexThreads + userStreams, BOUND);
                }
            }
            for (RankCheck r : ranks) {
                r.close();
            }
            assertEquals(0, backend.liveBytes());
            assertEquals(0, backend.liveStreams());
            System.out.printf("leak cycles: %d in %.1f s, peak %d FlexLink threads, JVM threads %d before%n",
                    CYCLES, (System.nanoTime() - start) / 1e9, peakThreads, jvmThreads);
        }
        Bounded.threadsBackTo(flexThreads, BOUND);
        Bounded.within(BOUND, () -> mx.getThreadCount() <= jvmThreads,
                () -> "JVM threads " + mx.getThreadCount() + " > " + jvmThreads + " before the cycles");
        assertTrue(mx.getThreadCount() <= jvmThreads);
        System.out.printf("leak cycles: JVM threads %d after (%d before)%n", mx.getThreadCount(), jvmThreads);
    }

    private static final int TCP_CYCLES = 100;

    /**
     * The injected creation failures of the TCP cycles, in turn: rank 1 mapping the PCIe staging file rank 0
     * made, rank 1's PCIe path (after its send stream), rank 0's communicator (after every round). Rank 0
     * is not failed mid-creation: a rank waiting in a round is then only released by the creation timeout.
     */
    private static final FailingBackend.Fault[] TCP_FAULTS = {
        new FailingBackend.Fault("openShared", "rank-1", 1, Result.SYSTEM_ERROR),
        new FailingBackend.Fault("createStream", "rank-1", 2, Result.UNHANDLED_CUDA_ERROR),
        new FailingBackend.Fault("createEvent", "rank-0", 2, Result.UNHANDLED_CUDA_ERROR),
    };

    @Test
    void hundredInitRankCyclesOverTcp() throws Exception {
        Path devShm = Path.of("/dev/shm");
        Path shm = Files.createTempDirectory(Files.isDirectory(devShm) ? devShm : Path.of(System.getProperty(
                "java.io.tmpdir")), "fl-leakcycle-");
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TIMEOUT, "30s")
                .set(FlexLinkConfig.INIT_TIMEOUT, "30s").set(FlexLinkConfig.SHM_DIR, shm.toString())
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        int flexThreads = Bounded.flexlinkThreads().size();
        ExecutorService[] rankThreads = new ExecutorService[2];
        for (int r = 0; r < 2; r++) {
            String name = "rank-" + r; // the name the injected faults pick a rank by
            rankThreads[r] = Executors.newSingleThreadExecutor(task -> new Thread(task, name));
        }
        long start = System.nanoTime();
        int failed = 0;
        try (HostBackend host = new HostBackend(config)) {
            FailingBackend backend = new FailingBackend(host);
            RankCheck[] ranks = new RankCheck[2];
            Communicator[] probe = comms(initRank(backend, config, rankThreads));
            for (int r = 0; r < 2; r++) {
                ranks[r] = new RankCheck(host, probe[r], "user.r" + r, 4096); // buffers and streams kept
            }
            for (Communicator c : probe) {
                c.close();
            }
            long buffers = host.liveBytes();
            int userStreams = host.liveStreams();
            for (int i = 1; i <= TCP_CYCLES; i++) {
                int cycle = i;
                FailingBackend.Fault fault = i % 10 == 0 ? TCP_FAULTS[i / 10 % TCP_FAULTS.length] : null;
                backend.arm(fault);
                Object[] out = initRank(backend, config, rankThreads);
                int fired = backend.fired();
                backend.arm(null);
                if (fault != null) {
                    failed++;
                    assertEquals(1, fired, () -> fault + " in cycle " + cycle + ": " + Arrays.toString(out));
                    int faulty = fault.thread().equals("rank-0") ? 0 : 1;
                    FlexLinkException e = assertInstanceOf(FlexLinkException.class, out[faulty], () -> "cycle "
                            + cycle + ": " + out[faulty]);
                    assertEquals(fault.result(), e.result(), e.getMessage());
                    Object other = out[1 - faulty];
                    if (other instanceof Communicator c) { // built before its peer failed: told, then aborted
                        c.abort();
                        c.close();
                    } else {
                        assertInstanceOf(FlexLinkException.class, other, () -> "cycle " + cycle + ": " + other);
                    }
                } else {
                    Communicator[] comms = comms(out);
                    for (int r = 0; r < 2; r++) {
                        ranks[r].rebind(comms[r]);
                    }
                    long wrong = RankCheck.runAll(ranks, Collective.values()[i % 5], DataType.FLOAT32, ReduceOp.SUM,
                            2048 + i % 97, i % 2, i);
                    assertEquals(0, wrong, "cycle " + i);
                    if (i % 10 == 5) {
                        comms[0].abort();
                        comms[1].abort();
                    }
                    for (Communicator c : comms) {
                        c.close();
                    }
                }
                assertEquals(List.of(), shmFiles(shm), () -> "files left in " + shm + " after cycle " + cycle);
                if (i % 10 == 0) {
                    assertEquals(buffers, host.liveBytes(), () -> "off-heap bytes after cycle " + cycle);
                    assertEquals(userStreams, host.liveStreams(), () -> "streams after cycle " + cycle);
                    Bounded.threadsBackTo(flexThreads + userStreams, BOUND);
                }
            }
            for (RankCheck r : ranks) {
                r.close();
            }
            assertEquals(0, host.liveBytes());
            assertEquals(0, host.liveStreams());
            System.out.printf("initRank over TCP: %d cycles (%d failing creations) in %.1f s%n", TCP_CYCLES, failed,
                    (System.nanoTime() - start) / 1e9);
        } finally {
            for (ExecutorService e : rankThreads) {
                e.shutdownNow();
            }
            try (Stream<Path> left = Files.walk(shm)) {
                left.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
        Bounded.threadsBackTo(flexThreads, BOUND);
        assertEquals(List.of(), shmFiles(shm));
    }

    /** Both ranks of a new communicator, each created by its own thread through a TCP rendezvous: each one's communicator or exception. */
    private static Object[] initRank(FailingBackend backend, FlexLinkConfig config, ExecutorService[] rankThreads)
            throws InterruptedException {
        UniqueId id = FlexLink.getUniqueId("127.0.0.1", 0);
        UniqueId sent = UniqueId.fromBase64(id.toBase64()); // what another process would get
        @SuppressWarnings("unchecked")
        Future<Communicator>[] fs = new Future[2];
        for (int r = 0; r < 2; r++) {
            int rank = r;
            fs[r] = rankThreads[r].submit(() -> FlexLink.initRank(backend, config, 2, rank == 0 ? id : sent, rank, rank));
        }
        Object[] out = new Object[2];
        for (int r = 0; r < 2; r++) {
            try {
                out[r] = fs[r].get(BOUND.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                out[r] = e.getCause();
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("rank " + r + " still creating after " + BOUND, e);
            }
        }
        return out;
    }

    private static Communicator[] comms(Object[] out) {
        Communicator[] comms = new Communicator[out.length];
        for (int r = 0; r < out.length; r++) {
            Object o = out[r];
            comms[r] = assertInstanceOf(Communicator.class, o, () -> "rank: " + o);
        }
        return comms;
    }

    /** The shared-memory files of this process in {@code dir}. */
    private static List<String> shmFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(f -> f.getFileName().toString()).filter(n -> n.startsWith(ShmSegment.FILE_PREFIX)).sorted()
                    .toList();
        }
    }
}
