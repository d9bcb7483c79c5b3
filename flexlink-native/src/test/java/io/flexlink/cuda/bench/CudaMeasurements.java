package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.BenchAccess;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.cuda.CudaStream;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Microbenchmarks of the CUDA backend on one GPU, each figure a ratio inside one run (CUDA events,
 * warm-up, median of many repetitions, random data):
 * (a) the PCIe path alone (2 ranks on one GPU) against plain concurrent H2D + D2H copies;
 * (b) the reduce kernel against a D2D copy, and the fused against the staged reduceFromHost consumer;
 * (c) host enqueue time of an 8-byte AllReduce: FlexLink, the facade, raw bytedeco NCCL, and
 * (d) heap bytes allocated per steady-state call ({@link EnqueueMeasurements});
 * (e) the two strided-primary AllGather variants at one rank.
 * Usage: {@code CudaMeasurements [reps]}; {@code -Dparts=a,b,...} runs only those parts (default all),
 * {@code -Dchunks=8M,4M,2M} sets (a)'s chunk sizes.
 */
public final class CudaMeasurements {
    static final long MB = 1 << 20;
    static int reps = 20;
    static CudaBackend backend;

    private CudaMeasurements() {
    }

    public static void main(String[] args) {
        if (args.length > 0) {
            reps = Integer.parseInt(args[0]);
        }
        backend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
        try {
            System.out.println("# FlexLink CUDA measurements on " + backend.topology().describe());
            // the sections that hold streams on host counters (gated) come last
            if (part("b")) {
                kernels();
            }
            if (part("c") || part("d")) {
                EnqueueMeasurements.run(backend);
            }
            if (part("e")) {
                strided();
            }
            if (part("b")) {
                consumersInPath();
            }
            if (part("a")) {
                pcie();
            }
        } finally {
            backend.close();
        }
    }

    private static boolean part(String name) {
        String parts = System.getProperty("parts", "a,b,c,d,e");
        return Arrays.asList(parts.split(",")).contains(name);
    }

    static double median(double[] t) {
        double[] c = t.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }

    static void row(String format, Object... args) {
        System.out.println(String.format(Locale.ROOT, format, args));
    }

    static void randomize(long address, long bytes, long seed) {
        randomize(backend, address, bytes, seed);
    }

    /** Random finite floats (no NaN) into {@code bytes} of device memory of {@code backend}. */
    static void randomize(io.flexlink.runtime.Backend backend, long address, long bytes, long seed) {
        ByteBuffer b = ByteBuffer.allocateDirect((int) Math.min(bytes, 64 * MB));
        SplittableRandom r = new SplittableRandom(seed);
        while (b.remaining() >= 8) {
            b.putLong(r.nextLong() & 0x3FFF_FFFF_3FFF_FFFFL); // finite floats, no NaN
        }
        for (long off = 0; off < bytes; off += b.capacity()) {
            b.clear().limit((int) Math.min(b.capacity(), bytes - off));
            backend.upload(address + off, b);
        }
    }

    // ---- (a) PCIe path vs plain concurrent copies ----

    /** Median ms of concurrent D2H and H2D copies of {@code bytes} each on two streams ({@link CopyPair}). */
    static double copiesMillis(long bytes) {
        double[] t = new double[reps];
        try (CopyPair copies = new CopyPair(backend, bytes)) {
            for (int i = -3; i < reps; i++) {
                double ms = copies.millis();
                if (i >= 0) {
                    t[i] = ms;
                }
            }
        }
        return median(t);
    }

    /**
     * One collective on 2 ranks of GPU 0 over the PCIe path alone ({@link PcieCall}): {median GPU ms, median host ms
     * to enqueue both ranks}; gated as {@link PcieCall#run} says.
     */
    static double[] pcieMillis(Collective c, long bufferBytes, String chunk, int slots, boolean gated) {
        return pcieMillis(c, bufferBytes, chunk, slots, gated, false);
    }

    /** As above; {@code inPlace}: each rank's input is its block of the output (AllGather) or the output itself. */
    static double[] pcieMillis(Collective c, long bufferBytes, String chunk, int slots, boolean gated,
                               boolean inPlace) {
        double[] t = new double[reps];
        double[] host = new double[reps];
        try (PcieCall call = new PcieCall(backend, bufferBytes, chunk, slots, inPlace)) {
            for (int i = -3; i < reps; i++) {
                double[] r = call.run(c, gated);
                if (i >= 0) {
                    t[i] = r[0];
                    host[i] = r[1];
                }
            }
        }
        return new double[] {median(t), median(host)};
    }

    static void pcie() {
        long size = 256 * MB;
        System.out.println();
        System.out.println("## (a) PCIe path alone, 2 ranks on GPU 0, 256 MB fp32, vs concurrent H2D+D2H copies (target >= 95%)");
        double base = copiesMillis(size);
        double baseRate = size / base / 1e6;
        row("baseline: concurrent copies of 256 MB each way: %.3f ms, %.1f GB/s per direction", base, baseRate);
        System.out.println("gated: GPU held until both ranks are enqueued; ungated: includes this thread enqueueing"
                + " rank 0 then rank 1");
        row("%-10s %5s %5s %9s %9s %8s %11s %8s %11s", "collective", "chunk", "slots", "gated ms", "GB/s/dir",
                "vs copy", "ungated ms", "vs copy", "enqueue ms");
        for (Collective c : new Collective[] {Collective.ALL_GATHER, Collective.ALL_REDUCE}) {
            // bytes crossing PCIe each way, both ranks together: AllGather each rank's half once;
            // AllReduce each rank's buffer twice (its contributions out, then its reduced segment out)
            long perDirection = c == Collective.ALL_GATHER ? size : 2 * size;
            for (String chunk : System.getProperty("chunks", "8M,4M,2M").split(",")) {
                for (int slots : new int[] {2, 4}) {
                    double[] g = pcieMillis(c, size, chunk, slots, true);
                    double[] u = pcieMillis(c, size, chunk, slots, false);
                    double rate = perDirection / g[0] / 1e6;
                    double urate = perDirection / u[0] / 1e6;
                    row("%-10s %5s %5d %9.3f %9.1f %7.1f%% %11.3f %7.1f%% %11.3f", c, chunk, slots, g[0], rate,
                            100 * rate / baseRate, u[0], 100 * urate / baseRate, u[1]);
                }
            }
        }
    }

    // ---- (b) kernels ----

    static double kernelMillis(RuntimeStream s, Runnable body) {
        RuntimeEvent a = backend.createEvent(0, true);
        RuntimeEvent b = backend.createEvent(0, true);
        double[] t = new double[reps];
        for (int i = -3; i < reps; i++) {
            s.record(a);
            body.run();
            s.record(b);
            b.synchronize();
            if (i >= 0) {
                t[i] = b.elapsedMillis(a);
            }
        }
        a.close();
        b.close();
        return median(t);
    }

    static void kernels() {
        System.out.println();
        System.out.println("## (b) reduce kernel vs D2D copy, 256 MB per operand (kernel moves 3x, copy 2x; target >= 90%)");
        long n = 256 * MB;
        CudaStream s = (CudaStream) backend.createStream(0, "bench.kernel");
        try (DeviceMemory a = backend.allocate(0, n); DeviceMemory b = backend.allocate(0, n);
             DeviceMemory d = backend.allocate(0, n)) {
            randomize(a.address(), n, 3);
            randomize(b.address(), n, 4);
            double copy = kernelMillis(s, () -> s.copy(d.address(), a.address(), n));
            double copyRate = 2.0 * n / copy / 1e6;
            row("D2D copy: %.3f ms, %.0f GB/s (read + write)", copy, copyRate);
            for (DataType t : new DataType[] {DataType.FLOAT32, DataType.BFLOAT16}) {
                long count = n / t.size();
                double k = kernelMillis(s, () -> s.reduce(d.address(), a.address(), b.address(), count, t, ReduceOp.SUM, 1));
                double rate = 3.0 * n / k / 1e6;
                row("%-8s sum: %.3f ms, %.0f GB/s (read a, b + write) = %.1f%% of copy", t, k, rate, 100 * rate / copyRate);
            }
            System.out.println();
            System.out.println("## (b) reduceFromHost consumers, fp32 sum, 256 MB read from 4 pinned slots (host-read GB/s)");
            row("%8s %12s %12s %8s", "chunk", "fused GB/s", "staged GB/s", "faster");
            long ring = 32 * MB;
            try (PinnedMemory host = backend.allocatePinned(ring)) {
                for (long chunk : new long[] {MB, 2 * MB, 4 * MB, 8 * MB}) {
                    long chunks = n / chunk;
                    long count = chunk / 4;
                    double[] rate = new double[2];
                    for (int v = 0; v < 2; v++) {
                        boolean fused = v == 0;
                        double ms = kernelMillis(s, () -> {
                            for (long c = 0; c < chunks; c++) {
                                long slot = (c % 4) * chunk;
                                long dst = d.address() + c * chunk;
                                if (fused) {
                                    s.reduceFromHostFused(dst, a.address() + c * chunk, host, slot, count,
                                            DataType.FLOAT32, ReduceOp.SUM, 1);
                                } else {
                                    s.reduceFromHostStaged(dst, a.address() + c * chunk, host, slot, count,
                                            DataType.FLOAT32, ReduceOp.SUM, 1);
                                }
                            }
                        });
                        rate[v] = n / ms / 1e6;
                    }
                    row("%7dM %12.1f %12.1f %8s", chunk / MB, rate[0], rate[1], rate[0] >= rate[1] ? "fused" : "staged");
                }
            }
        } finally {
            s.close();
        }
    }

    static void consumersInPath() {
        System.out.println();
        System.out.println("## (b) reduceFromHost consumers inside the PCIe path: AllReduce 256 MB fp32, 2 ranks on GPU 0,"
                + " 4 slots, gated (GPU ms)");
        row("%8s %10s %10s %8s", "chunk", "fused ms", "staged ms", "faster");
        for (String chunk : System.getProperty("chunks", "8M,4M,2M").split(",")) {
            BenchAccess.stagedMinBytes(Long.MAX_VALUE);
            double fused = pcieMillis(Collective.ALL_REDUCE, 256 * MB, chunk, 4, true)[0];
            BenchAccess.stagedMinBytes(0);
            double staged = pcieMillis(Collective.ALL_REDUCE, 256 * MB, chunk, 4, true)[0];
            BenchAccess.stagedMinBytes(CudaStream.STAGED_MIN_BYTES);
            row("%8s %10.3f %10.3f %8s", chunk, fused, staged, fused < staged ? "fused" : "staged");
        }
    }

    // ---- (e) strided primary AllGather variants ----

    static void strided() {
        System.out.println();
        System.out.println("## (e) strided primary AllGather at 1 rank (slice of 70% of each block): grouped broadcasts"
                + " vs NCCL AllGather + cudaMemcpy2DAsync");
        row("%10s %14s %14s", "slice", "roots ms", "scratch ms");
        for (long bytes : new long[] {MB, 16 * MB, 256 * MB}) {
            long count = bytes / 4;
            long stride = count * 10 / 7;
            double roots = BenchAccess.stridedAllGatherMillis(backend, count, stride, true, reps);
            double scratch = BenchAccess.stridedAllGatherMillis(backend, count, stride, false, reps);
            row("%9dM %14.3f %14.3f", bytes / MB, roots, scratch);
        }
    }
}