package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.ProcessJob;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The PCIe path of two ranks on GPU 0, two ways in one call: one process driving both ranks
 * ({@code FlexLink.initAll}), then two processes of one rank each (torchrun's variables; staging shared
 * through /dev/shm and pinned with cudaHostRegister in each). Same size, settings and timing (CUDA
 * events around {@code iters} calls after warm-up, the slower rank counts); prints the bus bandwidth of
 * each and their ratio. NCCL refuses two ranks on one GPU, so the PCIe path runs alone in both.
 * Usage: {@code MultiProcessMeasurement [bytes=256M] [iters=20]}.
 */
public final class MultiProcessMeasurement {
    private static final String CHILD = "--child";
    private static final List<Collective> COLLECTIVES = List.of(Collective.ALL_GATHER, Collective.ALL_REDUCE);

    private MultiProcessMeasurement() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals(CHILD)) {
            child(Collective.parse(args[1]), Long.parseLong(args[2]), Integer.parseInt(args[3]));
            return;
        }
        long bytes = args.length > 0 ? io.flexlink.config.ByteSizes.parse(args[0]) : 256L << 20;
        int iters = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        FlexLinkConfig config = FlexLinkConfig.fromEnvironment();
        double[] single = new double[COLLECTIVES.size()];
        try (CudaBackend backend = CudaBackend.open(config)) {
            System.out.println("# PCIe path, 2 ranks on GPU 0 of " + backend.topology().describe() + ", "
                    + bytes + " B, " + iters + " iterations, chunk " + config.chunkBytes() + " B x " + config.slots()
                    + " slots");
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 0);
            try {
                for (int i = 0; i < COLLECTIVES.size(); i++) {
                    single[i] = timeUs(backend, comms, COLLECTIVES.get(i), bytes, iters);
                }
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
            }
        }
        System.out.println(String.format(Locale.ROOT, "# %-14s %12s %16s %16s %8s", "collective", "bytes",
                "1 process GB/s", "2 processes GB/s", "ratio"));
        Path logs = Files.createTempDirectory("flexlink-mp-measure");
        for (int i = 0; i < COLLECTIVES.size(); i++) {
            Collective c = COLLECTIVES.get(i);
            double multi = twoProcesses(c, bytes, iters, logs);
            double bw1 = busBw(c, bytes, single[i]);
            double bw2 = busBw(c, bytes, multi);
            System.out.println(String.format(Locale.ROOT, "  %-14s %12d %16.2f %16.2f %8.3f", c.testName(), bytes,
                    bw1, bw2, bw2 / bw1));
        }
    }

    private static double busBw(Collective c, long bytes, double us) {
        return bytes / 1e3 / us * c.busFactor(2);
    }

    /** The slower rank's time per call (us) of two single-rank processes. */
    private static double twoProcesses(Collective c, long bytes, int iters, Path logs) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("FLEXLINK_BACKEND", "cuda");
        env.put("FLEXLINK_TUNING_CACHE", "off");
        String visible = System.getenv("CUDA_VISIBLE_DEVICES");
        env.put("CUDA_VISIBLE_DEVICES", visible == null || visible.isBlank() ? "0" : visible.split(",")[0].trim());
        env.putIfAbsent("CUDA_DEVICE_MAX_CONNECTIONS", "32");
        try (ProcessJob job = new ProcessJob(2, List.of("-Xmx2g"), MultiProcessMeasurement.class.getName(),
                List.of(CHILD, c.testName(), String.valueOf(bytes), String.valueOf(iters)), env, null, "READY",
                logs)) {
            double worst = 0;
            for (int r = 0; r < 2; r++) {
                int code = job.awaitExit(r, 600);
                String line = job.line(r, "TIME_US ");
                if (code != 0 || line == null) {
                    throw new IllegalStateException("rank " + r + " of the 2-process run failed (" + code + ")"
                            + job.describe());
                }
                worst = Math.max(worst, Double.parseDouble(line.substring("TIME_US ".length())));
            }
            return worst;
        }
    }

    /** One rank of the two-process run: prints its time per call. */
    private static void child(Collective c, long bytes, int iters) {
        Backend backend = FlexLink.backend();
        try (Communicator comm = FlexLink.initFromEnv()) {
            double us = timeUs(backend, new Communicator[] {comm}, c, bytes, iters);
            System.out.println("TIME_US " + us);
        }
        System.out.flush();
        System.exit(0);
    }

    /** Time per call (us) of {@code c} on every rank in {@code comms} (this process's), the slowest rank's. */
    static double timeUs(Backend backend, Communicator[] comms, Collective c, long bytes, int iters) {
        int n = comms[0].size();
        long count = c == Collective.ALL_GATHER || c == Collective.REDUCE_SCATTER ? bytes / 4 / n : bytes / 4;
        int k = comms.length;
        RuntimeStream[] streams = new RuntimeStream[k];
        DeviceMemory[] send = new DeviceMemory[k];
        DeviceMemory[] recv = new DeviceMemory[k];
        RuntimeEvent[] start = new RuntimeEvent[k];
        RuntimeEvent[] stop = new RuntimeEvent[k];
        try {
            for (int r = 0; r < k; r++) {
                int d = comms[r].device();
                streams[r] = backend.createStream(d, "measure.r" + r);
                send[r] = backend.allocate(d, bytes);
                recv[r] = backend.allocate(d, bytes);
                backend.fill(send[r].address(), bytes, (byte) 0);
                start[r] = backend.createEvent(d, true);
                stop[r] = backend.createEvent(d, true);
            }
            for (int i = 0; i < 3; i++) {
                enqueue(comms, c, send, recv, count, streams);
            }
            for (RuntimeStream s : streams) {
                s.synchronize();
            }
            for (int r = 0; r < k; r++) {
                streams[r].record(start[r]);
            }
            for (int i = 0; i < iters; i++) {
                enqueue(comms, c, send, recv, count, streams);
            }
            double ms = 0;
            for (int r = 0; r < k; r++) {
                streams[r].record(stop[r]);
                streams[r].synchronize();
                ms = Math.max(ms, stop[r].elapsedMillis(start[r]));
            }
            return ms * 1e3 / iters;
        } finally {
            for (int r = 0; r < k; r++) {
                close(stop[r]);
                close(start[r]);
                close(recv[r]);
                close(send[r]);
                close(streams[r]);
            }
        }
    }

    private static void enqueue(Communicator[] comms, Collective c, DeviceMemory[] send, DeviceMemory[] recv,
                                long count, RuntimeStream[] streams) {
        if (comms.length > 1) {
            FlexLink.groupStart();
        }
        try {
            for (int r = 0; r < comms.length; r++) {
                CollectiveHarness.enqueue(c, comms[r], send[r].address(), recv[r].address(), count, DataType.FLOAT32,
                        ReduceOp.SUM, 0, streams[r]);
            }
        } finally {
            if (comms.length > 1) {
                FlexLink.groupEnd();
            }
        }
    }

    private static void close(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // measurement teardown
            }
        }
    }
}
