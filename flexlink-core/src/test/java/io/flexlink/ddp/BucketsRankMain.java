package io.flexlink.ddp;

import io.flexlink.Buffer;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import java.util.ArrayList;
import java.util.List;

/**
 * One rank of a multi-process bucket test, started with torchrun's variables. Modes:
 * <ul>
 *   <li>{@code exact}: three steps of {@link GradientBucketsTest}'s exact gradients (odd ranks' gradients
 *   contiguous, rank 1 never marking p2 ready, with findUnusedParameters), every element checked; prints
 *   {@code OK} and exits 0, or prints {@code WRONG ...} and exits 1;</li>
 *   <li>{@code mismatch}: rank 1 registers its parameters in another order; prints {@code BUILT} and exits 0
 *   if the buckets were built anyway.</li>
 * </ul>
 * An error prints {@code ERROR <result>: <message>} and exits 2.
 */
public final class BucketsRankMain {
    private BucketsRankMain() {
    }

    public static void main(String[] args) {
        int code;
        try (Communicator comm = FlexLink.initFromEnv()) {
            code = args[0].equals("mismatch") ? mismatch(comm) : exact(comm);
        } catch (FlexLinkException e) {
            System.out.println("ERROR " + e.getMessage());
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    private static int exact(Communicator comm) {
        List<String> wrong = new ArrayList<>();
        try (GradientBucketsTest.Rank rank = new GradientBucketsTest.Rank(FlexLink.backend(), comm, comm.rank() % 2 == 1,
                b -> b.findUnusedParameters(true))) {
            for (int s = 0; s < 3; s++) {
                rank.step(s, GradientBucketsTest.shuffled(0), comm.rank() == 1 ? 2 : -1);
                GradientBucketsTest.compare(rank, s, 1, wrong);
            }
        }
        if (!wrong.isEmpty()) {
            System.out.println("WRONG " + wrong);
            return 1;
        }
        System.out.println("OK");
        return 0;
    }

    private static int mismatch(Communicator comm) {
        int[] counts = comm.rank() == 1 ? new int[] {64, 100} : new int[] {100, 64};
        try (DdpRig.Gradients g = new DdpRig.Gradients(FlexLink.backend(), comm.device(), counts, false)) {
            GradientBucketsBuilder b = GradientBuckets.builder(comm, FlexLink.backend()).config(DdpRig.CONFIG);
            for (int p = 0; p < counts.length; p++) {
                b.register(Buffer.wrap(g.address[p], 4L * counts[p], comm.device()), counts[p], DataType.FLOAT32);
            }
            b.build().close();
        }
        System.out.println("BUILT");
        return 0;
    }
}
