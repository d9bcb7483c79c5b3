package io.flexlink.bench.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.ddp.BucketView;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The training example on the host backend, ranks as threads of this process: after 50 steps every rank
 * holds bit-identical weights, and the loss curve is that of one rank training on the concatenated batch.
 *
 * <p>Tolerance {@link #TOLERANCE}: the data-parallel run computes the same terms as the single-rank run, and
 * only sums them in another order (each rank's shard first, then across ranks, the AllReduce in a fixed order
 * per element). A reordered fp32 sum of {@code m} terms differs by at most {@code (m - 1) 2^-24} relative to
 * the sum of its magnitudes, about 1.9e-6 for the 32-sample batch sums here; SGD carries such differences
 * from step to step without amplifying them noticeably over 50 steps of this contracting model. Measured
 * (this model, 2 to 4 ranks): at most 4.3e-7. 1e-5 is 23 times that and 5 times the one-sum bound, while a
 * 1 % error of the gradients' scale (tested below with the learning rate) moves the curve by more than 1e-3,
 * so a bucket reduced wrongly, twice, with the wrong scale or from the wrong step cannot pass. One rank must
 * match exactly: AVG over one rank is the identity, and nothing else differs.
 */
@Timeout(300)
class DataParallelTrainingTest {
    static final double TOLERANCE = 1e-5;

    /** A small model (14 KB of gradients in 3 buckets), 8 samples per rank, every path split. */
    static TrainOptions small(int ranks, boolean contiguous) {
        return TrainOptions.defaults().with(b -> {
            b.ranks = ranks;
            b.widths = new int[] {16, 48, 48, 8};
            b.teacherHidden = 24;
            b.batch = 8;
            b.steps = 50;
            b.timingRounds = 0;
            b.contiguous = contiguous;
            b.overrides.put(FlexLinkConfig.SHARE, "pcie=0.3");
            b.overrides.put(FlexLinkConfig.MIN_SPLIT_BYTES, "0");
            b.overrides.put(FlexLinkConfig.CHUNK_BYTES, "4K");
            b.overrides.put(FlexLinkConfig.TUNING_CACHE, "off");
            b.overrides.put(FlexLinkConfig.DDP_FIRST_BUCKET_CAP, "1K");
            b.overrides.put(FlexLinkConfig.DDP_BUCKET_CAP, "2K");
        });
    }

    static void identicalOnEveryRank(List<RankResult> all) {
        for (RankResult r : all) {
            assertTrue(r.sameOnAllRanks(), "rank " + r.rank() + " saw another rank's weights differ");
            assertEquals(all.get(0).weights(), r.weights(), "rank " + r.rank() + "'s weights");
        }
    }

    @ParameterizedTest(name = "{0} ranks, contiguous gradients: {1}")
    @CsvSource({"1, true", "2, false", "3, true", "4, false"})
    void everyRankEndsIdenticalAndTheLossCurveIsTheSingleRankOne(int n, boolean contiguous) throws Exception {
        TrainOptions o = small(n, contiguous);
        List<RankResult> all = DataParallelTraining.inProcess(o);
        RankResult reference = DataParallelTraining.reference(o);
        identicalOnEveryRank(all);
        List<BucketView> buckets = all.get(0).buckets();
        assertEquals(3, buckets.size(), buckets.toString());
        for (BucketView b : buckets) {
            assertEquals(contiguous, b.inPlace(), b.toString());
        }
        float[] curve = all.get(0).losses();
        if (n == 1) {
            assertArrayEquals(reference.losses(), curve, "one rank: the same bits as plain SGD");
            assertEquals(reference.weights(), all.get(0).weights());
        } else {
            double diff = LossCurves.maxRelativeDifference(curve, reference.losses());
            assertTrue(diff <= TOLERANCE, "loss curve differs from one rank on the whole batch by " + diff);
        }
        assertTrue(curve[49] < 0.6f * curve[0], "the student learns: " + curve[0] + " -> " + curve[49]);
    }

    @Test
    void aOnePercentErrorOfTheGradientsIsFarOutsideTheTolerance() throws Exception {
        TrainOptions o = small(2, true);
        float[] curve = DataParallelTraining.inProcess(o).get(0).losses();
        float[] off = DataParallelTraining.reference(o.with(b -> b.lr = o.lr() * 1.01f)).losses();
        double diff = LossCurves.maxRelativeDifference(curve, off);
        assertTrue(diff > 100 * TOLERANCE, "the comparison sees a 1 % gradient error: " + diff);
    }

    @Test
    void sumWithAScaleOfOneOverTheRanksTrainsLikeAverage() throws Exception {
        TrainOptions o = small(3, false).with(b -> b.average = false);
        List<RankResult> all = DataParallelTraining.inProcess(o);
        identicalOnEveryRank(all);
        double diff = LossCurves.maxRelativeDifference(all.get(0).losses(), DataParallelTraining.reference(o).losses());
        assertTrue(diff <= TOLERANCE, "SUM x 1/3 against one rank: " + diff);
    }

    @Test
    void bf16GradientsKeepTheReplicasIdenticalAndStillTrain() throws Exception {
        TrainOptions o = small(2, true).with(b -> b.cast = "bf16");
        List<RankResult> all = DataParallelTraining.inProcess(o);
        identicalOnEveryRank(all);
        for (BucketView b : all.get(0).buckets()) {
            assertEquals("bfloat16", b.wireType().ncclName());
        }
        float[] curve = all.get(0).losses();
        float[] fp32 = DataParallelTraining.reference(o).losses();
        // bf16 keeps 8 significant bits of each gradient: the curve follows fp32's closely, not exactly
        assertTrue(Math.abs(curve[49] - fp32[49]) < 0.05 * fp32[49], curve[49] + " against fp32 " + fp32[49]);
        assertTrue(LossCurves.maxRelativeDifference(curve, fp32) > TOLERANCE, "the gradients did travel as bf16");
    }
}
