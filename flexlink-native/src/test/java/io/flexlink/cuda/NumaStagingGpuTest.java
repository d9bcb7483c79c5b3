package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.testing.CollectiveHarness;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The NUMA-placed staging path on a GPU: {@code flexlink.numa=force} binds each producer's slots before
 * the memory is pinned (on a one-node host, to node 0), then every collective runs through it, checked.
 */
@Tag("gpu")
class NumaStagingGpuTest {
    static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
            .set(FlexLinkConfig.NUMA, "force").set(FlexLinkConfig.PATHS, "primary,pcie")
            .set(FlexLinkConfig.SHARE, "pcie=0.4").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "1M").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    static CudaBackend backend;

    @BeforeAll
    static void open() {
        GpuTests.assumeCuda();
        backend = CudaBackend.open(CONFIG); // the backend's own setting decides placement
    }

    @AfterAll
    static void close() {
        if (backend != null) {
            backend.close();
        }
    }

    private static void run(FlexLinkConfig config, int... devices) {
        Communicator[] comms = FlexLink.initAll(backend, config, devices);
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            long seed = 11;
            for (Collective c : Collective.collectives()) {
                CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 3_000_001, 0, false, seed++);
                assertEquals(0, o.wrong, c + " on devices " + java.util.Arrays.toString(devices) + ": " + o);
            }
        } finally {
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    @Test
    void pcieStagingBoundBeforePinning() {
        long pinned = backend.livePinnedBytes();
        run(CONFIG, 0, 0);      // PCIe path alone (NCCL refuses two ranks on one GPU)
        run(CONFIG, 0);         // NCCL + PCIe on one rank
        assertEquals(pinned, backend.livePinnedBytes(), "placed staging released");
    }
}
