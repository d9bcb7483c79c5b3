package io.flexlink.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Buffer;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.ddp.host.HostGradientCast;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Gradient buckets on the host backend, 1 to 4 ranks in one process, with gradients whose reduction is
 * exact (each rank's value is a multiple of the rank count, every sum is a small integer), so that every
 * element is compared bit for bit.
 */
class GradientBucketsTest {
    /** Element counts of six parameters; with the caps below they make several buckets. */
    static final int[] COUNTS = {700, 33, 1500, 64, 2100, 5};
    static final long FIRST_CAP = 2048;
    static final long CAP = 4096;

    /** Rank {@code r}'s gradient element {@code i} of parameter {@code p} in step {@code s}, for {@code n} ranks. */
    static float value(int n, int p, int i, int r, int s) {
        return n * ((p * 31 + i * 7 + r * 3 + s * 5) % 64);
    }

    /** The AVG over {@code n} ranks of {@link #value}. */
    static float average(int n, int p, int i, int s, int skipRank) {
        float sum = 0;
        for (int r = 0; r < n; r++) {
            sum += r == skipRank ? 0 : value(n, p, i, r, s);
        }
        return sum / n;
    }

    /** One rank's buckets and gradients. */
    static final class Rank implements AutoCloseable {
        final Backend backend;
        final Communicator comm;
        final RuntimeStream compute;
        final DdpRig.Gradients grads;
        final List<Parameter> params = new ArrayList<>();
        final GradientBuckets buckets;

        Rank(Backend backend, Communicator comm, boolean contiguous, Consumer<GradientBucketsBuilder> options) {
            this.backend = backend;
            this.comm = comm;
            this.compute = backend.createStream(comm.device(), "test.compute");
            this.grads = new DdpRig.Gradients(backend, comm.device(), COUNTS, contiguous);
            GradientBucketsBuilder b = GradientBuckets.builder(comm, backend).config(DdpRig.CONFIG)
                    .firstBucketCap(FIRST_CAP).bucketCap(CAP);
            for (int p = 0; p < COUNTS.length; p++) {
                params.add(b.register("p" + p, Buffer.wrap(grads.address[p], 4L * COUNTS[p], comm.device()),
                        COUNTS[p], DataType.FLOAT32));
            }
            options.accept(b);
            this.buckets = b.build();
        }

        void fill(int step) {
            int n = comm.size();
            for (int p = 0; p < COUNTS.length; p++) {
                float[] v = new float[COUNTS[p]];
                for (int i = 0; i < v.length; i++) {
                    v[i] = value(n, p, i, comm.rank(), step);
                }
                DdpRig.upload(backend, grads.address[p], v);
            }
        }

        /** One step: fills the gradients, marks them ready in {@code order} (skipping {@code skip}), finishes. */
        void step(int step, int[] order, int skip) {
            fill(step);
            for (int p : order) {
                if (p != skip) {
                    buckets.ready(params.get(p), compute);
                }
            }
            buckets.finish(compute);
            compute.synchronize();
        }

        float[] gradient(int p) {
            return DdpRig.download(backend, grads.address[p], COUNTS[p]);
        }

        @Override
        public void close() {
            buckets.close();
            compute.close();
            grads.close();
        }
    }

    /** A different ready order per rank: launches must not depend on it. */
    static int[] shuffled(int rank) {
        int[][] orders = {{5, 4, 3, 2, 1, 0}, {0, 1, 2, 3, 4, 5}, {2, 5, 0, 4, 1, 3}, {4, 0, 5, 3, 2, 1}};
        return orders[rank % orders.length];
    }

    @ParameterizedTest(name = "{0} ranks, contiguous gradients: {1}")
    @CsvSource({"1, true", "2, false", "2, true", "3, false", "4, true"})
    void averagesEveryGradientBitForBitWhateverOrderEachRankReadiesThem(int n, boolean contiguous) {
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            List<String> failures = DdpRig.onEveryRankOk(n, r -> {
                List<String> wrong = new ArrayList<>();
                try (Rank rank = new Rank(backend, comms[r], contiguous, b -> b.rebuildFromReadyOrder(false))) {
                    assertTrue(rank.buckets.layout().size() >= 3, "several buckets: " + rank.buckets.layout());
                    for (BucketView v : rank.buckets.layout()) {
                        assertEquals(contiguous, v.inPlace(), "in place exactly when the gradients are contiguous: " + v);
                    }
                    for (int s = 0; s < 3; s++) {
                        rank.step(s, shuffled(r + s), -1);
                        compare(rank, s, -1, wrong);
                    }
                }
                return String.join("\n", wrong);
            });
            for (String f : failures) {
                assertEquals("", f);
            }
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    static void compare(Rank rank, int step, int skipRank, List<String> wrong) {
        int n = rank.comm.size();
        for (int p = 0; p < COUNTS.length; p++) {
            float[] got = rank.gradient(p);
            for (int i = 0; i < got.length; i++) {
                float want = average(n, p, i, step, p == 2 ? skipRank : -1);
                if (Float.floatToRawIntBits(got[i]) != Float.floatToRawIntBits(want) && wrong.size() < 5) {
                    wrong.add("rank " + rank.comm.rank() + " step " + step + " p" + p + "[" + i + "] = " + got[i]
                            + ", expected " + want);
                }
            }
        }
    }

    @Test
    void rebuildsTheBucketsFromTheFirstStepsReadyOrder() {
        int n = 2;
        int[] order = {2, 5, 0, 4, 1, 3};
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            List<List<List<List<String>>>> layouts = DdpRig.onEveryRankOk(n, r -> {
                List<List<List<String>>> seen = new ArrayList<>();
                List<String> wrong = new ArrayList<>();
                try (Rank rank = new Rank(backend, comms[r], false, b -> { })) {
                    seen.add(names(rank.buckets));
                    for (int s = 0; s < 3; s++) {
                        rank.step(s, order, -1);
                        compare(rank, s, -1, wrong);
                        seen.add(names(rank.buckets));
                    }
                }
                assertEquals(List.of(), wrong);
                return seen;
            });
            List<List<List<String>>> rank0 = layouts.get(0);
            // before: reverse model order; after step 1: the ready order, cut at the same caps (each bucket's
            // gradients lie in model order inside it)
            assertEquals(List.of(List.of("p4", "p5"), List.of("p2", "p3"), List.of("p0", "p1")), rank0.get(0));
            assertEquals(List.of(List.of("p2"), List.of("p0", "p4", "p5"), List.of("p1", "p3")), rank0.get(1));
            assertEquals(rank0.get(1), rank0.get(3), "rebuilt once, then kept");
            assertEquals(rank0, layouts.get(1), "both ranks hold the same buckets");
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    /**
     * DDP's overlap: the {@code ready} that completes a bucket launches its AllReduce there and then, and no
     * other {@code ready} launches anything; {@code finish} only waits. Calls are counted as the communicator
     * enqueues them (its paths' call counts), so a launch left for {@code finish} would show. The second step
     * is watched: the first one's finish also agrees on the rebuilt buckets (one collective of its own).
     */
    @Test
    void theReadyThatCompletesABucketLaunchesItsAllReduceBeforeFinish() {
        int n = 2;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            DdpRig.onEveryRankOk(n, r -> {
                try (Rank rank = new Rank(backend, comms[r], false, b -> { })) {
                    rank.step(0, shuffled(0), -1);
                    List<List<String>> buckets = names(rank.buckets);
                    assertTrue(buckets.size() > 2, "several buckets: " + buckets);
                    rank.fill(1);
                    List<String> readied = new ArrayList<>();
                    long calls = calls(comms[r]);
                    for (int p = COUNTS.length - 1; p >= 0; p--) {
                        rank.buckets.ready(rank.params.get(p), rank.compute);
                        readied.add("p" + p);
                        String last = "p" + p;
                        boolean completes = buckets.stream().anyMatch(b -> b.contains(last) && readied.containsAll(b));
                        long now = calls(comms[r]);
                        assertEquals(completes, now > calls, "after ready(" + last + "), buckets " + buckets + ", calls " + calls + " -> " + now);
                        calls = now;
                    }
                    rank.buckets.finish(rank.compute);
                    assertEquals(calls, calls(comms[r]), "finish launches nothing");
                    rank.compute.synchronize();
                    for (int p = 0; p < COUNTS.length; p++) {
                        float[] got = rank.gradient(p);
                        for (int i = 0; i < got.length; i++) {
                            assertEquals(average(n, p, i, 1, -1), got[i], "p" + p + "[" + i + "]");
                        }
                    }
                }
                return null;
            });
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    /** Every call the communicator's paths have enqueued (a split call counts once per path it used). */
    private static long calls(Communicator c) {
        long sum = 0;
        for (io.flexlink.CommStats.PathTotals t : c.stats().paths()) {
            sum += t.calls();
        }
        return sum;
    }

    private static List<List<String>> names(GradientBuckets b) {
        List<List<String>> out = new ArrayList<>();
        for (BucketView v : b.layout()) {
            out.add(v.parameters());
        }
        return out;
    }

    @Test
    void sumWithAScale() {
        int n = 3;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            DdpRig.onEveryRankOk(n, r -> {
                try (Rank rank = new Rank(backend, comms[r], r != 1, b -> b.reduction(ReduceOp.SUM, 0.5))) {
                    rank.step(0, shuffled(0), -1);
                    for (int p = 0; p < COUNTS.length; p++) {
                        float[] got = rank.gradient(p);
                        for (int i = 0; i < got.length; i++) {
                            assertEquals(average(n, p, i, 0, -1) * n * 0.5f, got[i], "p" + p + "[" + i + "]");
                        }
                    }
                }
                return null;
            });
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    @Test
    void unusedParametersContributeZerosWithTheFlag() {
        int n = 3;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            List<String> failures = DdpRig.onEveryRankOk(n, r -> {
                List<String> wrong = new ArrayList<>();
                // contiguous on rank 0 (zeroed in place), copied on the others (zeroed in the bucket)
                try (Rank rank = new Rank(backend, comms[r], r == 0, b -> b.findUnusedParameters(true))) {
                    for (int s = 0; s < 3; s++) {
                        rank.step(s, shuffled(0), r == 1 ? 2 : -1); // rank 1 never marks p2 ready
                        compare(rank, s, 1, wrong);
                    }
                }
                return String.join("\n", wrong);
            });
            for (String f : failures) {
                assertEquals("", f);
            }
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    @Test
    void aParameterNeverReadyWithoutTheFlagFailsEveryRank() {
        int n = 2;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            List<DdpRig.Outcome<Object>> outcomes = DdpRig.onEveryRank(n, r -> {
                try (Rank rank = new Rank(backend, comms[r], false, b -> { })) {
                    rank.step(0, shuffled(0), r == 1 ? 2 : -1);
                }
                return null;
            });
            FlexLinkException skipped = (FlexLinkException) outcomes.get(1).error();
            assertNotNull(skipped, "the rank that skipped p2 fails");
            assertEquals(Result.INVALID_USAGE, skipped.result());
            assertTrue(skipped.getMessage().contains("'p2'") && skipped.getMessage().contains("findUnusedParameters"),
                    skipped.getMessage());
            Throwable other = outcomes.get(0).error();
            assertTrue(other instanceof FlexLinkException, "the other rank fails too instead of waiting: " + other);
            assertTrue(comms[0].getAsyncError() != Result.SUCCESS, "rank 0's communicator reports the abort");
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    @Test
    void aSecondReadyInOneStepIsRefusedAndTheStepStillCompletes() {
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator comm = DdpRig.comms(backend, 1)[0];
            try (Rank rank = new Rank(backend, comm, false, b -> { })) {
                rank.fill(0);
                rank.buckets.ready(rank.params.get(4), rank.compute);
                FlexLinkException e = assertThrows(FlexLinkException.class,
                        () -> rank.buckets.ready(rank.params.get(4), rank.compute));
                assertEquals(Result.INVALID_USAGE, e.result());
                assertTrue(e.getMessage().contains("param: 'p4'"), e.getMessage());
                for (int p : new int[] {5, 3, 2, 1, 0}) {
                    rank.buckets.ready(rank.params.get(p), rank.compute);
                }
                rank.buckets.finish(rank.compute);
                rank.compute.synchronize();
                List<String> wrong = new ArrayList<>();
                compare(rank, 0, -1, wrong);
                assertEquals(List.of(), wrong);
                assertEquals(1, rank.buckets.steps());
            }
            comm.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"BFLOAT16, 0.0009765625", "FLOAT16, 0.0001220703125"})
    void aCastCarriesTheGradientsInTheNarrowType(DataType wire, float belowHalfAnUlp) {
        int n = 2;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            DdpRig.onEveryRankOk(n, r -> {
                try (HostGradientCast cast = new HostGradientCast(backend, comms[r].device(), wire);
                     Rank rank = new Rank(backend, comms[r], r == 0, b -> b.reduction(ReduceOp.SUM, 1).cast(cast))) {
                    for (BucketView v : rank.buckets.layout()) {
                        assertEquals(wire, v.wireType());
                        assertFalse(v.inPlace(), "a cast needs the bucket's own buffer");
                    }
                    for (int s = 0; s < 2; s++) {
                        for (int p = 0; p < COUNTS.length; p++) {
                            float[] v = new float[COUNTS[p]];
                            for (int i = 0; i < v.length; i++) {
                                v[i] = (r + 1) * ((i + p + s) % 8 + 1) + belowHalfAnUlp; // the fraction is lost on the wire
                            }
                            DdpRig.upload(backend, rank.grads.address[p], v);
                        }
                        for (int p : shuffled(0)) {
                            rank.buckets.ready(rank.params.get(p), rank.compute);
                        }
                        rank.buckets.finish(rank.compute);
                        rank.compute.synchronize();
                        for (int p = 0; p < COUNTS.length; p++) {
                            float[] got = rank.gradient(p);
                            float[] want = new float[got.length];
                            for (int i = 0; i < got.length; i++) {
                                want[i] = 3 * ((i + p + s) % 8 + 1); // (1 + 2) times the integer part, exactly
                            }
                            assertArrayEquals(want, got, "p" + p + " step " + s);
                        }
                    }
                }
                return null;
            });
            for (Communicator c : comms) {
                c.close();
            }
        }
    }
}
