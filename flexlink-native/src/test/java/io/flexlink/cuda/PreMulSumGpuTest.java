package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.facade.PreMulSumProgram;
import io.flexlink.testing.PreMulSumRanks;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * PreMulSum on the CUDA backend, with the checks {@code PreMulSumTest} runs on the host backend in CI
 * ({@link PreMulSumRanks}: every reducing collective, every type, host and device scalars, outputs poisoned,
 * every element bit for bit against the Java reference). One rank split between NCCL and the PCIe path at a
 * fixed share, with counts far past the size where NCCL 2.28.3's own one-rank PreMulSum leaves the tail
 * unwritten (FlexLink never hands NCCL a PreMulSum: it scales, then NCCL sums); two ranks on one GPU over the
 * PCIe path alone; and the facade's ncclRedOpCreatePreMulSum/ncclRedOpDestroy in a bytedeco-style program.
 */
@Tag("gpu")
class PreMulSumGpuTest {
    static CudaBackend backend;

    @BeforeAll
    static void open() {
        backend = GpuTests.open();
    }

    @AfterAll
    static void close() {
        if (backend != null) {
            backend.close();
        }
    }

    private static FlexLinkConfig oneRankConfig() {
        return FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "1M").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    private static FlexLinkConfig sharedGpuConfig() {
        return FlexLinkConfig.builder().set(FlexLinkConfig.CHUNK_BYTES, "256K").set(FlexLinkConfig.SLOTS, "4")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    /** Both paths carried bytes of the calls (a fixed share: every call is split). */
    private static void assertSplit(PreMulSumRanks rs) {
        assertEquals(List.of("primary", "pcie"), io.flexlink.testing.Paths.names(rs.comms[0]));
        assertTrue(rs.pathBytes("primary") > 0 && rs.pathBytes("pcie") > 0,
                "primary " + rs.pathBytes("primary") + ", pcie " + rs.pathBytes("pcie"));
    }

    /** 1M + 3 elements: NCCL's share (0.7 of it) is past every type's one-rank fault size (64K-512K elements). */
    @Test
    void oneRankNcclAndPcieEveryCollectiveAndType() {
        try (PreMulSumRanks rs = new PreMulSumRanks(backend, oneRankConfig(), new int[] {0}, (1 << 20) + 3)) {
            rs.everyCollectiveTypeAndHostScalar();
            assertSplit(rs);
        }
    }

    @Test
    void oneRankNcclAndPcieDeviceScalar() {
        try (PreMulSumRanks rs = new PreMulSumRanks(backend, oneRankConfig(), new int[] {0}, 600_001)) {
            rs.deviceScalarsChangedBetweenCalls();
            assertSplit(rs);
        }
    }

    @Test
    void twoRanksOnOneGpuOverPcie() {
        try (PreMulSumRanks rs = new PreMulSumRanks(backend, sharedGpuConfig(), new int[] {0, 0}, 300_007)) {
            List<String> paths = io.flexlink.testing.Paths.names(rs.comms[0]);
            assertTrue(paths.get(0).equals("primary(off)") && paths.contains("pcie"), paths.toString());
            rs.everyCollectiveTypeAndHostScalar();
            rs.deviceScalarsChangedBetweenCalls();
            assertTrue(rs.pathBytes("pcie") > 0);
        }
    }

    /** Through the facade: nccl-tests' per-rank scalars (1 on even ranks, 2 on odd) and a device scalar changed. */
    @Test
    void facadeOneRank() {
        PreMulSumProgram.run(new int[] {0}, (1 << 20) + 5);
    }

    @Test
    void facadeTwoRanksOnOneGpu() {
        PreMulSumProgram.run(new int[] {0, 0}, 300_001);
    }
}
