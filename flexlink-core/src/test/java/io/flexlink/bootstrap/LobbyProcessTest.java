package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.testing.ProcessJob;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ids any process may join, with real processes on the host backend: the id passed as bytes (Base64 on a
 * command line) to a second JVM that is rank 1; and an id made by a process that is no rank at all, rank 0
 * elsewhere, the maker exiting once the ranks met.
 */
class LobbyProcessTest {
    private static final Map<String, String> ENV = ProcessJob.hostEnv("60s");
    @TempDir
    Path logs;
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private Backend backend;
    private FlexLinkConfig config;

    @BeforeEach
    void open() {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder();
        for (Map.Entry<String, String> e : ENV.entrySet()) {
            for (var s : FlexLinkConfig.settings()) {
                if (s.env().equals(e.getKey())) {
                    b.set(s, e.getValue());
                }
            }
        }
        config = b.build().conclude();
        backend = FlexLink.openBackend(config);
    }

    @AfterEach
    void close() {
        pool.shutdownNow();
        backend.close();
    }

    @Test
    void aSecondJvmJoinsAnIdPassedAsBytes() throws Exception {
        UniqueId id = FlexLink.getUniqueIdForProcesses(config);
        try (ProcessJob child = new ProcessJob(1, LobbyMain.class.getName(),
                List.of("rank", id.toBase64(), "2", "1"), ENV, null, "never", logs)) {
            try (Communicator zero = FlexLink.initRank(backend, config, 2, id, 0, 0)) {
                assertEquals(0, LobbyMain.allReduce(backend, zero));
            }
            assertEquals(0, child.awaitExit(0, 120), child.describe());
            assertEquals("WRONG 0", child.line(0, "WRONG"), child.describe());
        }
    }

    @Test
    void rankZeroNeedNotRunWhereTheIdWasMade() throws Exception {
        try (ProcessJob maker = new ProcessJob(1, LobbyMain.class.getName(), List.of("make"), ENV, null, "never",
                logs)) {
            String line = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while ((line = maker.line(0, "ID ")) == null && maker.process(0).isAlive()) {
                assertTrue(System.nanoTime() < deadline, maker.describe());
                Thread.sleep(10); // waiting for the child's output, not synchronizing ranks
            }
            assertNotNull(line, maker.describe());
            UniqueId id = UniqueId.fromBase64(line.substring(3));
            assertEquals(UniqueId.LOBBY, id.flags());
            Future<Communicator> one = pool.submit(() -> FlexLink.initRank(backend, config, 2, id, 1, 1));
            try (Communicator zero = FlexLink.initRank(backend, config, 2, id, 0, 0);
                 Communicator first = one.get(120, TimeUnit.SECONDS)) {
                maker.process(0).getOutputStream().close(); // the id's maker exits now
                assertEquals(0, maker.awaitExit(0, 120), maker.describe());
                Future<Long> w1 = pool.submit(() -> LobbyMain.allReduce(backend, first));
                assertEquals(0, LobbyMain.allReduce(backend, zero));
                assertEquals(0, w1.get(120, TimeUnit.SECONDS));
            }
        }
    }
}
