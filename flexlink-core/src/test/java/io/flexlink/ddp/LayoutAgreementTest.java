package io.flexlink.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Buffer;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ranks whose buckets would not match get the same error on every rank, at the same point and at once,
 * instead of launching collectives that hang or mix gradients.
 */
class LayoutAgreementTest {
    /** Every rank's outcome must be an INVALID_USAGE naming {@code culprit} and containing {@code words}. */
    private static void everyRankFails(List<DdpRig.Outcome<Object>> outcomes, String culprit, String words) {
        for (int r = 0; r < outcomes.size(); r++) {
            Throwable e = outcomes.get(r).error();
            assertTrue(e instanceof FlexLinkException, "rank " + r + " fails: " + e);
            FlexLinkException f = (FlexLinkException) e;
            assertEquals(Result.INVALID_USAGE, f.result(), f.getMessage());
            assertTrue(f.getMessage().contains(culprit) && f.getMessage().contains(words), f.getMessage());
        }
        assertEquals(outcomes.get(0).error().getMessage(), outcomes.get(outcomes.size() - 1).error().getMessage(),
                "every rank reaches the same verdict");
    }

    @Test
    void aRankRegisteringInAnotherOrderFailsEveryRankAtBuild() {
        int n = 3;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            List<DdpRig.Outcome<Object>> outcomes = DdpRig.onEveryRank(n, r -> {
                int[] counts = r == 2 ? new int[] {64, 100, 300} : new int[] {100, 64, 300};
                try (DdpRig.Gradients g = new DdpRig.Gradients(backend, comms[r].device(), counts, true)) {
                    GradientBucketsBuilder b = GradientBuckets.builder(comms[r], backend).config(DdpRig.CONFIG);
                    for (int p = 0; p < counts.length; p++) {
                        b.register(Buffer.wrap(g.address[p], 4L * counts[p], comms[r].device()), counts[p],
                                DataType.FLOAT32);
                    }
                    b.build().close();
                }
                return null;
            });
            everyRankFails(outcomes, "rank 2 registered 3 parameters", "same order");
            for (Communicator c : comms) {
                assertEquals(Result.SUCCESS, c.getAsyncError(), "the communicator stays usable");
                c.close();
            }
        }
    }

    @Test
    void aRankWithOtherOptionsFailsEveryRankAtBuild() {
        int n = 2;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            List<DdpRig.Outcome<Object>> outcomes = DdpRig.onEveryRank(n, r -> {
                try (DdpRig.Gradients g = new DdpRig.Gradients(backend, comms[r].device(), new int[] {100}, true)) {
                    GradientBucketsBuilder b = GradientBuckets.builder(comms[r], backend).config(DdpRig.CONFIG)
                            .reduction(r == 1 ? ReduceOp.SUM : ReduceOp.AVG, 1);
                    b.register(Buffer.wrap(g.address[0], 400, comms[r].device()), 100, DataType.FLOAT32);
                    b.build().close();
                }
                return null;
            });
            everyRankFails(outcomes, "rank 1 was built with other options", "nothing was launched");
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    @Test
    void aRankReadyingInAnotherOrderFailsEveryRankBeforeTheRebuild() {
        int n = 3;
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, n);
            List<String> wrongAfter = new ArrayList<>();
            List<DdpRig.Outcome<Object>> outcomes = DdpRig.onEveryRank(n, r -> {
                try (GradientBucketsTest.Rank rank = new GradientBucketsTest.Rank(backend, comms[r], true, b -> { })) {
                    int[] order = r == 1 ? new int[] {5, 4, 2, 3, 1, 0} : new int[] {5, 4, 3, 2, 1, 0};
                    try {
                        rank.step(0, order, -1);
                        return null;
                    } finally {
                        // the first step itself was reduced correctly: its buckets launched in the plan's order
                        RuntimeStream s = rank.compute;
                        s.synchronize();
                        List<String> wrong = new ArrayList<>();
                        compareStep0(rank, wrong);
                        synchronized (wrongAfter) {
                            wrongAfter.addAll(wrong);
                        }
                    }
                }
            });
            everyRankFails(outcomes, "rank 1 had 'p2' (#2, 1500 FLOAT32) ready 3rd where rank 0 had 'p3'",
                    "rebuildFromReadyOrder(false)");
            assertEquals(List.of(), wrongAfter);
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    private static void compareStep0(GradientBucketsTest.Rank rank, List<String> wrong) {
        int n = rank.comm.size();
        for (int p = 0; p < GradientBucketsTest.COUNTS.length; p++) {
            float[] got = rank.gradient(p);
            for (int i = 0; i < got.length; i++) {
                if (got[i] != GradientBucketsTest.average(n, p, i, 0, -1) && wrong.size() < 3) {
                    wrong.add("rank " + rank.comm.rank() + " p" + p + "[" + i + "] = " + got[i]);
                }
            }
        }
    }

    @Test
    void theFailedBucketsRefuseLaterSteps() {
        try (HostBackend backend = new HostBackend(DdpRig.CONFIG)) {
            Communicator[] comms = DdpRig.comms(backend, 2);
            List<DdpRig.Outcome<Object>> outcomes = DdpRig.onEveryRank(2, r -> {
                try (GradientBucketsTest.Rank rank = new GradientBucketsTest.Rank(backend, comms[r], false, b -> { })) {
                    int[] order = r == 1 ? new int[] {0, 1, 2, 3, 4, 5} : new int[] {5, 4, 3, 2, 1, 0};
                    FlexLinkException first = assertThrows(FlexLinkException.class, () -> rank.step(0, order, -1));
                    assertTrue(first.getMessage().contains("different orders"), first.getMessage());
                    rank.buckets.ready(rank.params.get(0), rank.compute);
                }
                return null;
            });
            everyRankFails(outcomes, "ready: the gradient buckets failed earlier", "different orders");
            for (Communicator c : comms) {
                c.close();
            }
        }
    }
}
