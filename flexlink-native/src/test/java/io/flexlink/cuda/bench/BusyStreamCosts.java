package io.flexlink.cuda.bench;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.cuda.CudaStream;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import java.util.Arrays;
import java.util.Locale;

/**
 * Host time of one stream operation as a split call meets it: many streams of one context, each held by a
 * wait on a host word that is released only after the timed enqueue, and copies of a chunk's size. Compares
 * against idle streams, to tell whether CUDA's cost per operation grows with busy streams or with bytes
 * (the fixed part of {@link SplitEnqueueCost}'s figure that the operation count does not explain).
 * Usage: {@code BusyStreamCosts}. Median of 15 rounds of 8 operations per stream.
 */
public final class BusyStreamCosts {
    private static final int PER_STREAM = 8;
    private static final int ROUNDS = 15;

    private BusyStreamCosts() {
    }

    interface Op {
        void run(CudaStream s, int i);
    }

    public static void main(String[] args) {
        try (CudaBackend b = CudaBackend.open(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda").build())) {
            long max = 32L << 20;
            PinnedMemory host = b.allocatePinned(max + 4096);
            DeviceMemory dev = b.allocate(0, max);
            DeviceMemory dev2 = b.allocate(0, max);
            System.out.println("# us per operation, median of " + ROUNDS + " rounds of " + PER_STREAM
                    + " per stream, round-robin over the streams");
            System.out.println("# operation                      streams  held (waiting)   idle");
            for (long bytes : new long[] {64 << 10, 4L << 20, 32L << 20}) {
                String size = bytes >= 1 << 20 ? (bytes >> 20) + "M" : (bytes >> 10) + "K";
                long by = bytes;
                row(b, host, "copy D2H " + size, (s, i) -> s.copy(host.deviceAddress() + 4096, dev.address(), by));
                row(b, host, "copy H2D " + size, (s, i) -> s.copy(dev.address(), host.deviceAddress() + 4096, by));
                row(b, host, "copyRows D2H 8 rows " + size, (s, i) -> s.copyRows(host.deviceAddress() + 4096,
                        by / 8, dev.address(), by / 8, by / 8, 8));
                row(b, host, "reduce fp32 " + size, (s, i) -> s.reduce(dev.address(), dev.address(), dev2.address(),
                        by / 4, DataType.FLOAT32, ReduceOp.SUM, 1));
            }
            row(b, host, "writeValue32", (s, i) -> s.writeValue32(host, 64, i));
            host.close();
            dev.close();
            dev2.close();
        }
    }

    private static void row(CudaBackend b, PinnedMemory host, String what, Op op) {
        for (int n : new int[] {1, 8, 24}) {
            CudaStream[] streams = new CudaStream[n];
            for (int k = 0; k < n; k++) {
                streams[k] = (CudaStream) b.createStream(0, "busy" + k);
            }
            double held = perOp(streams, host, op, true);
            double idle = perOp(streams, host, op, false);
            System.out.println(String.format(Locale.ROOT, "%-32s %6d %12.2f %10.2f", what, n, held, idle));
            for (CudaStream s : streams) {
                s.close();
            }
        }
    }

    private static double perOp(CudaStream[] streams, PinnedMemory host, Op op, boolean held) {
        double[] t = new double[ROUNDS];
        for (int r = -3; r < ROUNDS; r++) {
            host.writeCounter(0, 0);
            if (held) {
                for (CudaStream s : streams) {
                    s.waitValue32(host, 0, 1);
                }
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < PER_STREAM; i++) {
                for (CudaStream s : streams) {
                    op.run(s, i);
                }
            }
            long t1 = System.nanoTime();
            host.writeCounter(0, 1);
            for (CudaStream s : streams) {
                s.synchronize();
            }
            if (r >= 0) {
                t[r] = (t1 - t0) / 1e3 / (PER_STREAM * streams.length);
            }
        }
        Arrays.sort(t);
        return t[ROUNDS / 2];
    }
}
