package io.flexlink.bench.ddp;

import io.flexlink.FlexLinkException;
import io.flexlink.config.FlexLinkConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The GPU figures of the gradient buckets: the training example on GPU 0 in three configurations, two ranks
 * sharing the GPU (the PCIe path carries every bucket: NCCL refuses two ranks on one device), the same with
 * bf16 gradients, and one rank with NCCL and the PCIe path ({@code flexlink.share=pcie=0.2}). Each is checked
 * (every rank's weights identical; the loss curve against one rank training on the whole batch, exact for
 * one rank) and timed (step time compute only, with every AllReduce after backward, and overlapped). Ends
 * with a table for docs/benchmarks.md. Exit code 0 when every check passed, 1 when one failed, 2 on an error.
 *
 * <pre>
 * java -cp ... io.flexlink.bench.ddp.DdpGpuMain [--layers 1024,4096,4096,4096,1024] [--batch 256] [--steps 20]
 * </pre>
 */
public final class DdpGpuMain {
    /** Loss curves of two ranks against one: reordered fp32 sums over 512 samples, bound 511 x 2^-24 = 3e-5. */
    static final double BOUND = 1e-3;

    private DdpGpuMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        try {
            System.exit(runAll(args) ? 0 : 1);
        } catch (FlexLinkException e) {
            System.out.println("ERROR " + e.getMessage());
            System.exit(2);
        }
    }

    private static boolean runAll(String[] args) throws InterruptedException {
        TrainOptions base = TrainOptions.defaults().with(b -> {
            b.backend = "cuda";
            b.widths = new int[] {1024, 4096, 4096, 4096, 1024};
            b.teacherHidden = 1024;
            b.batch = 256;
            b.steps = 20;
            b.lr = 0.05f;
            b.timingRounds = 10;
        });
        TrainOptions given = TrainOptions.parse(args);
        TrainOptions o = base.with(b -> {
            if (contains(args, "--layers")) {
                b.widths = given.widths();
            }
            if (contains(args, "--batch")) {
                b.batch = given.batch();
            }
            if (contains(args, "--steps")) {
                b.steps = given.steps();
            }
            if (contains(args, "--timing-rounds")) {
                b.timingRounds = given.timingRounds();
            }
        });
        List<String> rows = new ArrayList<>();
        boolean ok = true;
        ok &= run("2 ranks on GPU 0, PCIe path", o.with(b -> {
            b.ranks = 2;
            b.devices = new int[] {0, 0};
        }), rows);
        ok &= run("2 ranks on GPU 0, PCIe path, bf16 gradients", o.with(b -> {
            b.ranks = 2;
            b.devices = new int[] {0, 0};
            b.cast = "bf16";
        }), rows);
        ok &= run("1 rank, NCCL + PCIe (pcie=0.2)", o.with(b -> {
            b.ranks = 1;
            b.devices = new int[] {0};
            b.overrides.put(FlexLinkConfig.SHARE, "pcie=0.2");
        }), rows);
        System.out.println();
        System.out.println("| configuration | model x samples per rank | gradients | compute only ms | AllReduce after "
                + "backward ms | overlapped ms | hidden by overlap ms | weights identical | loss vs 1 rank |");
        System.out.println("|---|---|---|---:|---:|---:|---:|---|---|");
        rows.forEach(System.out::println);
        System.out.println(ok ? "ALL CHECKS PASSED" : "SOME CHECKS FAILED");
        return ok;
    }

    private static boolean contains(String[] args, String option) {
        for (String a : args) {
            if (a.equals(option)) {
                return true;
            }
        }
        return false;
    }

    private static boolean run(String name, TrainOptions o, List<String> rows) throws InterruptedException {
        System.out.println("=== " + name);
        long t0 = System.nanoTime();
        List<RankResult> all = DataParallelTraining.inProcess(o);
        RankResult first = all.get(0);
        TrainReport.print(System.out, o, first.backend(), o.ranks(), "in one process", first);
        boolean same = true;
        for (RankResult r : all) {
            same &= r.sameOnAllRanks() && r.weights().equals(first.weights());
        }
        // the fp32 single-rank reference (for the bf16 run too: how far bf16 moves the curve)
        RankResult reference = DataParallelTraining.reference(o.with(b -> b.cast = "none"));
        double diff = LossCurves.maxRelativeDifference(first.losses(), reference.losses());
        boolean exactExpected = o.ranks() == 1 && o.cast().equals("none");
        boolean curveOk = exactExpected ? diff == 0 && reference.weights().equals(first.weights())
                : o.cast().equals("none") ? diff <= BOUND : true;
        System.out.printf(Locale.ROOT, "loss curve against one rank on the whole batch: max relative difference %.3g"
                + " (%s)%n", diff, exactExpected ? "must be 0" : o.cast().equals("none") ? "bound " + BOUND
                : "bf16: not checked");
        System.out.printf(Locale.ROOT, "checks: weights identical %s, loss curve %s (%.1f s)%n", same ? "yes" : "NO",
                curveOk ? "ok" : "FAILED", (System.nanoTime() - t0) / 1e9);
        double[] ms = first.medianMillis();
        rows.add(String.format(Locale.ROOT, "| %s | %s x%d | %s | %.2f | %.2f | %.2f | %.2f | %s | %.2g |", name,
                o.layersText(), o.batch(), TrainReport.size(first.gradientBytes()),
                ms[StepMode.COMPUTE_ONLY.ordinal()], ms[StepMode.AFTER_BACKWARD.ordinal()],
                ms[StepMode.OVERLAP.ordinal()],
                ms[StepMode.AFTER_BACKWARD.ordinal()] - ms[StepMode.OVERLAP.ordinal()], same ? "yes" : "NO", diff));
        return same && curveOk;
    }
}
