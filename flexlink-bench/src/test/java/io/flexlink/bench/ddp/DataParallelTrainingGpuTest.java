package io.flexlink.bench.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackendProvider;
import io.flexlink.ddp.BucketView;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The training example on the CUDA backend with the NVRTC kernels, on GPU 0: two ranks sharing the GPU
 * (NCCL refuses two ranks on one device, so the PCIe path carries every bucket) and one rank with NCCL and
 * the PCIe path. Skips itself where CUDA, NVRTC or NCCL is missing.
 *
 * <p>Tolerance: as in {@link DataParallelTrainingTest}, the runs differ only in the order of fp32 sums; the
 * batch sums here have 2 x 40 = 80 terms, whose reordering bound is 79 x 2^-24 = 4.7e-6, and 1e-4 is 21
 * times that. One rank must match exactly.
 */
@Tag("gpu")
@Timeout(600)
class DataParallelTrainingGpuTest {
    static final double TOLERANCE = 1e-4;

    @BeforeAll
    static void cuda() {
        String reason = new CudaBackendProvider().unavailableReason();
        assumeTrue(reason == null, () -> "no CUDA backend here: " + reason);
    }

    /** Ragged widths (partial 64 x 64 GEMM tiles everywhere), 40 samples per rank, every bucket split. */
    static TrainOptions onGpu0(int ranks, String share, String cast, boolean contiguous) {
        return TrainOptions.defaults().with(b -> {
            b.backend = "cuda";
            b.ranks = ranks;
            b.devices = new int[ranks];
            b.widths = new int[] {96, 200, 130, 24};
            b.teacherHidden = 70;
            b.batch = 40;
            b.steps = 30;
            b.timingRounds = 3;
            b.cast = cast;
            b.contiguous = contiguous;
            b.overrides.put(FlexLinkConfig.SHARE, share);
            b.overrides.put(FlexLinkConfig.MIN_SPLIT_BYTES, "0");
            b.overrides.put(FlexLinkConfig.TUNING_CACHE, "off");
            b.overrides.put(FlexLinkConfig.DDP_FIRST_BUCKET_CAP, "8K");
            b.overrides.put(FlexLinkConfig.DDP_BUCKET_CAP, "32K");
        });
    }

    private static void identical(List<RankResult> all) {
        for (RankResult r : all) {
            assertEquals("cuda", r.backend());
            assertTrue(r.sameOnAllRanks(), "rank " + r.rank());
            assertEquals(all.get(0).weights(), r.weights(), "rank " + r.rank());
        }
    }

    @Test
    void twoRanksOnOneGpuEndIdenticalAndTrainLikeOneRank() throws Exception {
        TrainOptions o = onGpu0(2, "auto", "none", true);
        List<RankResult> all = DataParallelTraining.inProcess(o);
        identical(all);
        assertTrue(all.get(0).buckets().size() >= 3, all.get(0).buckets().toString());
        for (BucketView b : all.get(0).buckets()) {
            assertTrue(b.inPlace(), b.toString());
        }
        float[] curve = all.get(0).losses();
        double diff = LossCurves.maxRelativeDifference(curve, DataParallelTraining.reference(o).losses());
        System.out.println("2 ranks on GPU 0: loss " + curve[0] + " -> " + curve[curve.length - 1]
                + ", max relative difference to one rank " + diff + ", paths " + all.get(0).paths());
        assertTrue(diff <= TOLERANCE, "loss curve against one rank on the whole batch: " + diff);
        assertTrue(curve[curve.length - 1] < 0.8f * curve[0], curve[0] + " -> " + curve[curve.length - 1]);
    }

    @Test
    void oneRankWithNcclAndPcieIsPlainSgdBitForBit() throws Exception {
        TrainOptions o = onGpu0(1, "pcie=0.2", "none", false);
        List<RankResult> all = DataParallelTraining.inProcess(o);
        RankResult reference = DataParallelTraining.reference(o);
        System.out.println("1 rank, NCCL + PCIe: paths " + all.get(0).paths());
        assertArrayEquals(reference.losses(), all.get(0).losses());
        assertEquals(reference.weights(), all.get(0).weights());
        long pcie = all.get(0).paths().stream().filter(p -> p.path().equals("pcie")).mapToLong(p -> p.bytes()).sum();
        assertTrue(pcie > 0, "the PCIe path carried part of the buckets: " + all.get(0).paths());
    }

    @Test
    void bf16GradientsOnTheGpuKeepTheReplicasIdentical() throws Exception {
        TrainOptions o = onGpu0(2, "auto", "bf16", false);
        List<RankResult> all = DataParallelTraining.inProcess(o);
        identical(all);
        float[] curve = all.get(0).losses();
        float[] fp32 = DataParallelTraining.reference(o).losses();
        assertTrue(Math.abs(curve[curve.length - 1] - fp32[fp32.length - 1]) < 0.05 * fp32[fp32.length - 1],
                curve[curve.length - 1] + " against fp32 " + fp32[fp32.length - 1]);
    }
}
