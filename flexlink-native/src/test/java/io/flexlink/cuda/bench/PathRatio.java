package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import java.util.Arrays;
import java.util.Locale;

/**
 * The PCIe path's rate on 2 ranks of GPU 0 at 256 MB as a ratio to the concurrent copies, interleaved at the level
 * of single runs: each repetition times the copies ({@link CopyPair}), one gated AllGather and one gated AllReduce
 * ({@link PcieCall}), in an order that rotates, and the ratio is taken within the repetition. {@link PathRate} times
 * each in a block of its own, so a ceiling that moves between blocks (4–6 % from turn to turn on the H200) moves
 * the ratio; here drift slower than one repetition (about 20 ms) cancels out. Prints each repetition, then the
 * medians and quartiles of the rates and of the per-repetition ratios. Usage: {@code PathRatio reps [chunk:slots]}
 * (default {@code 8M:4}, the geometry of two ranks).
 */
public final class PathRatio {
    private static final long SIZE = 256L << 20;
    private static final int WARM_UP = 3;

    private PathRatio() {
    }

    public static void main(String[] args) {
        int reps = Integer.parseInt(args[0]);
        String[] geometry = (args.length > 1 ? args[1] : "8M:4").split(":");
        CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
        double[][] rate = new double[3][reps]; // copies, AllGather, AllReduce: GB/s per direction
        try (CopyPair copies = new CopyPair(backend, SIZE);
             PcieCall path = new PcieCall(backend, SIZE, geometry[0], Integer.parseInt(geometry[1]), false)) {
            System.out.println("# 2 ranks of GPU 0, 256 MB, PCIe path alone, staging "
                    + geometry[0] + " x " + geometry[1] + "; GB/s per direction");
            System.out.println("# rep  copies  AllGather  AllReduce  AG/copies  AR/copies");
            for (int i = -WARM_UP; i < reps; i++) {
                double[] r = new double[3];
                for (int k = 0; k < 3; k++) {
                    int which = Math.floorMod(i + k, 3); // the order rotates: no kind always runs first
                    r[which] = which == 0 ? SIZE / copies.millis() / 1e6
                            : (which == 1 ? 1 : 2) * SIZE / path.run(which == 1 ? Collective.ALL_GATHER
                                    : Collective.ALL_REDUCE, true)[0] / 1e6;
                }
                if (i >= 0) {
                    for (int k = 0; k < 3; k++) {
                        rate[k][i] = r[k];
                    }
                    System.out.println(String.format(Locale.ROOT, "%5d %7.1f %10.1f %10.1f %9.1f%% %9.1f%%", i, r[0],
                            r[1], r[2], 100 * r[1] / r[0], 100 * r[2] / r[0]));
                }
            }
        } finally {
            backend.close();
        }
        double[][] ratio = new double[2][reps];
        for (int i = 0; i < reps; i++) {
            ratio[0][i] = 100 * rate[1][i] / rate[0][i];
            ratio[1][i] = 100 * rate[2][i] / rate[0][i];
        }
        System.out.println(String.format(Locale.ROOT, "median  copies %.1f  AllGather %.1f  AllReduce %.1f GB/s",
                quantile(rate[0], 2), quantile(rate[1], 2), quantile(rate[2], 2)));
        System.out.println(String.format(Locale.ROOT, "ratio   AllGather %.1f%% (quartiles %.1f-%.1f)  AllReduce %.1f%% "
                        + "(quartiles %.1f-%.1f) of the copies, per repetition, %d repetitions",
                quantile(ratio[0], 2), quantile(ratio[0], 1), quantile(ratio[0], 3), quantile(ratio[1], 2),
                quantile(ratio[1], 1), quantile(ratio[1], 3), reps));
    }

    /** Quartile {@code q} (1, 2 or 3) of {@code v}: the element at that fraction of the sorted values. */
    static double quantile(double[] v, int q) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[Math.min(s.length - 1, q * s.length / 4)];
    }
}
