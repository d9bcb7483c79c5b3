package io.flexlink.bench.ddp;

import io.flexlink.FlexLinkException;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/**
 * The worked example of FlexLink's gradient buckets: data-parallel training of a multi-layer perceptron on
 * synthetic data from a fixed teacher network, each rank on its own shard of every batch. Prints the loss
 * per step, the buckets, whether every rank ends with the same weights, the bytes per path, and the time
 * the overlap hides. Exit code 0 when every rank's weights are identical, 1 when not, 2 on an error.
 *
 * <pre>
 * java -cp flexlink-bench/target/flexlink-perf.jar io.flexlink.bench.ddp.TrainMain --ranks 4
 * </pre>
 */
public final class TrainMain {
    private TrainMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        TrainOptions o;
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println(TrainOptions.USAGE);
            return;
        }
        try {
            o = TrainOptions.parse(args);
        } catch (RuntimeException e) {
            System.err.println(e.getMessage());
            System.err.println(TrainOptions.USAGE);
            System.exit(2);
            return;
        }
        int code;
        try {
            code = run(o, System.getenv(), System.out);
        } catch (FlexLinkException e) {
            System.out.println("ERROR " + e.getMessage());
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    /** Runs {@code o}, printing to {@code out}; {@code env} holds torchrun's variables for {@code --from-env}. */
    static int run(TrainOptions o, Map<String, String> env, PrintStream out) throws InterruptedException {
        if (o.fromEnv()) {
            RankResult r = DataParallelTraining.fromEnvironment(o, env);
            if (r.rank() == 0) {
                int ranks = Integer.parseInt(env.get("WORLD_SIZE"));
                TrainReport.print(out, o, r.backend(), ranks, "(one process each)", r);
            } else {
                out.printf("rank %d: weights %s (sha-256 %s)%n", r.rank(),
                        r.sameOnAllRanks() ? "identical on all ranks" : "DIFFER between ranks", r.weights());
            }
            return r.sameOnAllRanks() ? 0 : 1;
        }
        List<RankResult> all = DataParallelTraining.inProcess(o);
        boolean same = true;
        for (RankResult r : all) {
            same &= r.sameOnAllRanks() && r.weights().equals(all.get(0).weights());
        }
        RankResult first = all.get(0);
        TrainReport.print(out, o, first.backend(), o.ranks(), "in one process", first);
        return same ? 0 : 1;
    }
}
