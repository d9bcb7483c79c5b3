package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * An id from {@code getUniqueId(host, port)} sends every rank through the TCP rendezvous and the
 * staging through /dev/shm files, also when the ranks are threads of one process.
 */
class TcpInitRankTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder()
            .set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "20s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();

    private static List<Path> myShmFiles() throws Exception {
        String prefix = "flexlink-" + Files.getAttribute(Path.of("/proc/self"), "unix:uid") + "-"
                + ProcessHandle.current().pid() + "-";
        try (Stream<Path> s = Files.list(Path.of("/dev/shm"))) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    @Test
    void threadsMeetOverTcpAndShareFileBackedStaging() throws Exception {
        UniqueId id = FlexLink.getUniqueId("127.0.0.1", 0);
        assertNotNull(id.address());
        assertTrue(id.port() > 0);
        UniqueId sent = UniqueId.fromBase64(id.toBase64()); // what another process would get
        try (HostBackend backend = new HostBackend(CONFIG)) {
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<Future<Communicator>> fs = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                int rank = r;
                fs.add(pool.submit(() -> FlexLink.initRank(backend, CONFIG, 3, rank == 0 ? id : sent, rank, rank)));
            }
            Communicator[] comms = new Communicator[3];
            for (int r = 0; r < 3; r++) {
                comms[r] = fs.get(r).get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertEquals(List.of(), myShmFiles(), "every file is unlinked once all ranks mapped it");
            try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                for (Collective c : Collective.collectives()) {
                    CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 10_007, 1, false, 3);
                    assertEquals(0, o.wrong, c + ": " + o);
                }
            }
            for (Communicator c : comms) {
                c.close();
            }
            assertEquals(0, backend.liveBytes(), "file mappings released");
            assertFalse(io.flexlink.bootstrap.TcpRendezvous.serves(id));
        }
    }
}
