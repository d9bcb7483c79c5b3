package io.flexlink.bench.ddp;

import io.flexlink.CommStats;
import io.flexlink.ddp.BucketView;
import java.util.List;

/**
 * What one rank's run produced.
 *
 * @param backend         the backend it ran on ({@code host} or {@code cuda})
 * @param losses          loss per training step: the mean over every rank's samples
 * @param weights         SHA-256 of the final parameters
 * @param sameOnAllRanks  true when every rank's digest equals this one's (checked through an AllGather)
 * @param medianMillis    median step time per {@link StepMode} (indexed by ordinal), or empty without timing
 * @param paths           bytes and calls per path of this rank's communicator (empty for the reference)
 * @param buckets         the buckets after training
 */
record RankResult(String backend, int rank, float[] losses, String weights, boolean sameOnAllRanks,
                  double[] medianMillis,
                  List<CommStats.PathTotals> paths, List<BucketView> buckets, long gradientBytes) {
}
