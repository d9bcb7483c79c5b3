package io.flexlink.cuda.bench;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.Arrays;
import java.util.Locale;

/**
 * The PCIe path's real ceiling: concurrent host→device and device→host copies of pinned memory, each GPU
 * alone and then every GPU at once (contention for PCIe switches and host memory). Median of repetitions,
 * timed with CUDA events. Usage: {@code CopyCeiling [MB per copy, default 256] [repetitions, default 10]}.
 */
public final class CopyCeiling {
    private CopyCeiling() {
    }

    public static void main(String[] args) {
        long bytes = (args.length > 0 ? Long.parseLong(args[0]) : 256) << 20;
        int reps = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        try (CudaBackend b = CudaBackend.open(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda").build())) {
            int n = b.deviceCount();
            DeviceMemory[] dev = new DeviceMemory[n];
            DeviceMemory[] dev2 = new DeviceMemory[n];
            PinnedMemory[] host = new PinnedMemory[n];
            PinnedMemory[] host2 = new PinnedMemory[n];
            RuntimeStream[] up = new RuntimeStream[n];
            RuntimeStream[] down = new RuntimeStream[n];
            RuntimeEvent[][] ev = new RuntimeEvent[n][4];
            for (int d = 0; d < n; d++) {
                dev[d] = b.allocate(d, bytes);
                dev2[d] = b.allocate(d, bytes);
                host[d] = b.allocatePinned(bytes);
                host2[d] = b.allocatePinned(bytes);
                up[d] = b.createStream(d, "h2d");
                down[d] = b.createStream(d, "d2h");
                for (int k = 0; k < 4; k++) {
                    ev[d][k] = b.createEvent(d, true);
                }
            }
            System.out.println("# concurrent H2D + D2H copies of " + (bytes >> 20) + " MB per direction per GPU, median of "
                    + reps + " (GB/s per direction per GPU)");
            System.out.println("# gpus  mode          h2d GB/s   d2h GB/s   sum GB/s");
            for (int d = 0; d < n; d++) {
                report(new int[] {d}, "gpu " + d + " alone", bytes, reps, dev, dev2, host, host2, up, down, ev);
            }
            if (n > 1) {
                int[] all = new int[n];
                for (int d = 0; d < n; d++) {
                    all[d] = d;
                }
                report(all, "all at once", bytes, reps, dev, dev2, host, host2, up, down, ev);
            }
            for (int d = 0; d < n; d++) {
                dev[d].close();
                dev2[d].close();
                host[d].close();
                host2[d].close();
                up[d].close();
                down[d].close();
            }
        }
    }

    private static void report(int[] gpus, String mode, long bytes, int reps, DeviceMemory[] dev, DeviceMemory[] dev2,
                               PinnedMemory[] host, PinnedMemory[] host2, RuntimeStream[] up, RuntimeStream[] down,
                               RuntimeEvent[][] ev) {
        double[] h2d = new double[reps];
        double[] d2h = new double[reps];
        for (int r = -2; r < reps; r++) {
            for (int d : gpus) {
                up[d].record(ev[d][0]);
                up[d].copy(dev[d].address(), host[d].deviceAddress(), bytes);
                up[d].record(ev[d][1]);
                down[d].record(ev[d][2]);
                down[d].copy(host2[d].deviceAddress(), dev2[d].address(), bytes);
                down[d].record(ev[d][3]);
            }
            double worstUp = 0;
            double worstDown = 0;
            for (int d : gpus) {
                up[d].synchronize();
                down[d].synchronize();
                worstUp = Math.max(worstUp, ev[d][1].elapsedMillis(ev[d][0]));
                worstDown = Math.max(worstDown, ev[d][3].elapsedMillis(ev[d][2]));
            }
            if (r >= 0) {
                h2d[r] = bytes / worstUp / 1e6;
                d2h[r] = bytes / worstDown / 1e6;
            }
        }
        Arrays.sort(h2d);
        Arrays.sort(d2h);
        System.out.printf(Locale.ROOT, "%6d  %-12s %9.1f  %9.1f  %9.1f%n", gpus.length, mode, h2d[reps / 2],
                d2h[reps / 2], h2d[reps / 2] + d2h[reps / 2]);
    }
}
