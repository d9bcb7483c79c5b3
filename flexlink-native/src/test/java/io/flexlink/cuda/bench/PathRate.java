package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.Locale;

/**
 * The PCIe path's rate on 2 ranks of GPU 0 (256 MB, 8M chunks, 4 slots, gated) beside two copy ceilings,
 * measured in turns so that drift touches all of them alike:
 * <ul>
 *   <li>{@code copies}: one 256 MB copy each way at once, rated by the whole span (#15's ceiling). When one
 *       direction is faster, the slower one runs alone for the tail of the span, at the one-way rate;</li>
 *   <li>{@code loaded}: each direction's 256 MB timed on its own while the other direction moves twice as
 *       much, so that it is loaded from its first byte to its last (the method of NVIDIA's nvbandwidth), and
 *       the slower of the two: what a pipeline that keeps both directions busy can reach.</li>
 * </ul>
 * Written against the measurement helpers that every build since the first round has, so that two builds can
 * be compared on one machine. Usage: {@code PathRate [reps] [turns]}.
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
            System.out.println("# GB/s per direction; vs: the path against copies and against loaded");
            System.out.println("# turn  copies  loaded  AllGather  vs copies  vs loaded  AllReduce  vs copies  vs loaded");
            for (int t = 1; t <= turns; t++) {
                double copy = size / CudaMeasurements.copiesMillis(size) / 1e6;
                double loaded = loadedRate(size);
                double ag = size / CudaMeasurements.pcieMillis(Collective.ALL_GATHER, size, "8M", 4, true)[0] / 1e6;
                double ar = 2 * size / CudaMeasurements.pcieMillis(Collective.ALL_REDUCE, size, "8M", 4, true)[0] / 1e6;
                System.out.println(String.format(Locale.ROOT,
                        "%6d %7.1f %7.1f %10.1f %9.1f%% %9.1f%% %10.1f %9.1f%% %9.1f%%", t, copy, loaded, ag,
                        100 * ag / copy, 100 * ag / loaded, ar, 100 * ar / copy, 100 * ar / loaded));
            }
        } finally {
            CudaMeasurements.backend.close();
        }
    }

    /**
     * The slower direction's rate while the other direction moves twice its bytes: median GB/s. Both streams
     * wait on a host counter until both copies are enqueued, so that the loading copy runs from the timed
     * one's first byte.
     */
    static double loadedRate(long bytes) {
        io.flexlink.runtime.Backend b = CudaMeasurements.backend;
        RuntimeStream d2h = b.createStream(0, "bench.loaded.d2h");
        RuntimeStream h2d = b.createStream(0, "bench.loaded.h2d");
        RuntimeEvent[] ev = {b.createEvent(0, true), b.createEvent(0, true), b.createEvent(0, true),
                b.createEvent(0, true)};
        int reps = CudaMeasurements.reps;
        double[] h2dRate = new double[reps];
        double[] d2hRate = new double[reps];
        try (DeviceMemory dev = b.allocate(0, 2 * bytes); DeviceMemory dev2 = b.allocate(0, 2 * bytes);
             PinnedMemory host = b.allocatePinned(2 * bytes); PinnedMemory host2 = b.allocatePinned(2 * bytes);
             HostGate gate = new HostGate(b)) {
            CudaMeasurements.randomize(dev.address(), 2 * bytes, 5);
            for (int i = -3; i < reps; i++) {
                for (int timed = 0; timed < 2; timed++) {
                    // timed 0: H2D of bytes inside a D2H of 2 x bytes; timed 1: the reverse
                    boolean h2dTimed = timed == 0;
                    gate.hold(() -> {
                        d2h.record(ev[0]);
                        d2h.copy(host.deviceAddress(), dev.address(), h2dTimed ? 2 * bytes : bytes);
                        d2h.record(ev[1]);
                        h2d.record(ev[2]);
                        h2d.copy(dev2.address(), host2.deviceAddress(), h2dTimed ? bytes : 2 * bytes);
                        h2d.record(ev[3]);
                    }, d2h, h2d);
                    d2h.synchronize();
                    h2d.synchronize();
                    if (i >= 0) {
                        if (timed == 0) {
                            h2dRate[i] = bytes / ev[3].elapsedMillis(ev[2]) / 1e6;
                        } else {
                            d2hRate[i] = bytes / ev[1].elapsedMillis(ev[0]) / 1e6;
                        }
                    }
                }
            }
        } finally {
            d2h.close();
            h2d.close();
            for (RuntimeEvent e : ev) {
                e.close();
            }
        }
        return Math.min(CudaMeasurements.median(h2dRate), CudaMeasurements.median(d2hRate));
    }
}
