package io.flexlink.nvshmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.comm.FlexCommunicator;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.path.PathContext;
import io.flexlink.path.PathProvider;
import io.flexlink.runtime.RankDevices;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.testing.CollectiveHarness;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * Where NVSHMEM cannot run (CI: no GPU, no NVSHMEM): the shim still builds and loads, a missing library
 * is an error code rather than a crash, the path says why it is off in one line, and every collective
 * still passes with {@code nvshmem} requested.
 */
class NvshmemUnavailableTest {
    private static FlexLinkConfig config(String paths) {
        return FlexLinkConfig.builder()
                .set(FlexLinkConfig.PATHS, paths)
                .set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.SHARE, "pcie=0.3,nvshmem=0.3")
                .build();
    }

    @Test
    void theProviderIsRegistered() {
        boolean found = false;
        for (PathProvider p : ServiceLoader.load(PathProvider.class)) {
            found |= p.name().equals("nvshmem") && p instanceof NvshmemPathProvider;
        }
        assertTrue(found, "META-INF/services registers NvshmemPathProvider");
    }

    @Test
    void theShimLoadsAndReportsAMissingLibraryWithoutCrashing() {
        NvshmemNative.load();
        assumeTrue(NvshmemNative.flexlink_nvshmem_loaded() == 0, "NVSHMEM is already open in this JVM");
        int rc = NvshmemNative.flexlink_nvshmem_open("/nonexistent/libnvshmem_host.so.3");
        assertEquals(-1, rc);
        String error = NvshmemNative.flexlink_nvshmem_error();
        assertTrue(error.startsWith("dlopen failed") && error.contains("/nonexistent/libnvshmem_host.so.3"), error);
        // every entry point is safe while nothing is open
        assertEquals(0, NvshmemNative.flexlink_nvshmem_loaded());
        assertEquals(-1, NvshmemNative.flexlink_nvshmem_version());
        assertEquals(-1, NvshmemNative.flexlink_nvshmem_my_pe());
        assertEquals(-1, NvshmemNative.flexlink_nvshmem_n_pes());
        assertEquals(0L, NvshmemNative.flexlink_nvshmem_malloc(1 << 20));
        assertEquals(-1, NvshmemNative.flexlink_nvshmem_get_uniqueid(new byte[128]));
        assertEquals(-1, NvshmemNative.flexlink_nvshmem_init(new byte[128], 0, 1));
        NvshmemNative.flexlink_nvshmem_putmem_signal_on_stream(0, 0, 8, 0, 1, 10, 0, 0);
        NvshmemNative.flexlink_nvshmem_signal_wait_until_on_stream(0, 5, 1, 0);
        NvshmemNative.flexlink_nvshmem_quiet_on_stream(0);
        NvshmemNative.flexlink_nvshmem_barrier_all_on_stream(0);
        NvshmemNative.flexlink_nvshmem_free(0);
        NvshmemNative.flexlink_nvshmem_finalize();
        assertEquals(128, NvshmemNative.flexlink_nvshmem_uniqueid_bytes());
        // NVSHMEM 3.x values, from the header the shim cites
        assertEquals(9, NvshmemNative.flexlink_nvshmem_signal_set());
        assertEquals(10, NvshmemNative.flexlink_nvshmem_signal_add());
        assertEquals(5, NvshmemNative.flexlink_nvshmem_cmp_ge());
    }

    @Test
    void onTheHostBackendThePathSaysWhyItIsOff() {
        FlexLinkConfig config = config("primary,pcie,nvshmem");
        try (HostBackend backend = new HostBackend(config)) {
            String reason = new NvshmemPathProvider().unavailableReason(
                    new PathContext(backend, config, mine -> new byte[][] {mine}, (purpose, bytes, placement, init) -> {
                        throw new AssertionError("no memory is made to say why not");
                    }, 0, RankDevices.of(backend, new int[] {0}), EnqueueBudget.ONE_RANK_PER_THREAD));
            assertNotNull(reason);
            assertFalse(reason.contains("\n"), "one line: " + reason);
            assertTrue(reason.contains("cuda backend"), reason);
        }
    }

    @Test
    void everyCollectiveStillPassesWithNvshmemRequested() {
        for (int ranks : new int[] {1, 3}) {
            FlexLinkConfig config = config("primary,pcie,nvshmem");
            try (HostBackend backend = new HostBackend(config)) {
                int[] devices = new int[ranks];
                for (int r = 0; r < ranks; r++) {
                    devices[r] = r;
                }
                Communicator[] comms = FlexLink.initAll(backend, config, devices);
                try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                    for (Communicator c : comms) {
                        assertFalse(io.flexlink.testing.Paths.names(c).contains("nvshmem"),
                                "paths in use: " + io.flexlink.testing.Paths.names(c));
                    }
                    long seed = 7;
                    for (Collective c : Collective.collectives()) {
                        CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 5_001, 0, false, seed++);
                        assertEquals(0, o.wrong, ranks + " ranks, " + c + ": " + o);
                        o = h.run(c, DataType.BFLOAT16, ReduceOp.AVG, 3_333, ranks - 1, true, seed++);
                        assertEquals(0, o.wrong, ranks + " ranks, " + c + " in place: " + o);
                    }
                } finally {
                    for (Communicator c : comms) {
                        c.close();
                    }
                }
            }
        }
    }
}
