package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import java.util.Locale;

/**
 * The PCIe path's rate on 2 ranks of GPU 0 at 256 MB for several staging geometries, each turn beside the two
 * copy ceilings of {@link PathRate}, so that the geometries meet the same drift. Usage:
 * {@code PathSweep reps turns chunk:slots ...} (for instance {@code 8M:4 16M:4 32M:2}).
 */
public final class PathSweep {
    private PathSweep() {
    }

    public static void main(String[] args) {
        CudaMeasurements.reps = Integer.parseInt(args[0]);
        int turns = Integer.parseInt(args[1]);
        long size = 256L << 20;
        CudaMeasurements.backend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
        try {
            System.out.println("# GB/s per direction; % of copies / % of loaded");
            for (int t = 1; t <= turns; t++) {
                double copy = size / CudaMeasurements.copiesMillis(size) / 1e6;
                double loaded = PathRate.loadedRate(size);
                StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "turn %d copies %.1f loaded %.1f", t,
                        copy, loaded));
                for (int a = 2; a < args.length; a++) {
                    String[] g = args[a].split(":");
                    int slots = Integer.parseInt(g[1]);
                    double ag = size / CudaMeasurements.pcieMillis(Collective.ALL_GATHER, size, g[0], slots, true)[0]
                            / 1e6;
                    double ar = 2 * size / CudaMeasurements.pcieMillis(Collective.ALL_REDUCE, size, g[0], slots,
                            true)[0] / 1e6;
                    row.append(String.format(Locale.ROOT, " | %s AG %.1f (%.1f%%/%.1f%%) AR %.1f (%.1f%%/%.1f%%)",
                            args[a], ag, 100 * ag / copy, 100 * ag / loaded, ar, 100 * ar / copy, 100 * ar / loaded));
                }
                System.out.println(row);
            }
        } finally {
            CudaMeasurements.backend.close();
        }
    }
}
