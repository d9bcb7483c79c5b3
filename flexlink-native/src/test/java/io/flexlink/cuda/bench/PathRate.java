package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import java.util.Locale;

/**
 * The PCIe path's rate on 2 ranks of GPU 0 (256 MB, 8M chunks, 4 slots, gated) beside the concurrent-copy
 * ceiling, measured in turns (ceiling, AllGather, AllReduce) so that drift touches all three alike; written
 * against the measurement helpers that every build since the first round has, so that two builds can be
 * compared on one machine. Usage: {@code PathRate [reps] [turns]}.
 */
public final class PathRate {
    private PathRate() {
    }

    public static void main(String[] args) {
        CudaMeasurements.reps = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int turns = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        long size = 256L << 20;
        CudaMeasurements.backend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
        try {
            System.out.println("# turn  copies GB/s  AllGather GB/s  vs copy  AllReduce GB/s  vs copy");
            for (int t = 1; t <= turns; t++) {
                double copy = size / CudaMeasurements.copiesMillis(size) / 1e6;
                double ag = size / CudaMeasurements.pcieMillis(Collective.ALL_GATHER, size, "8M", 4, true)[0] / 1e6;
                double ar = 2 * size / CudaMeasurements.pcieMillis(Collective.ALL_REDUCE, size, "8M", 4, true)[0] / 1e6;
                System.out.println(String.format(Locale.ROOT, "%6d %12.1f %15.1f %7.1f%% %15.1f %7.1f%%", t, copy, ag,
                        100 * ag / copy, ar, 100 * ar / copy));
            }
        } finally {
            CudaMeasurements.backend.close();
        }
    }
}
