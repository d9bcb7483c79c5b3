package io.flexlink.cuda.bench;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeGraph;
import io.flexlink.runtime.RuntimeStream;
import java.util.Locale;

/**
 * An AllReduce eager against the same AllReduce captured into a CUDA graph and replayed, on one GPU: host
 * time per call (eager: {@code groupStart}, a call per rank, {@code groupEnd}; replayed: one graph launch per
 * rank, divided by the calls the graph holds) and device time per call (CUDA events around a batch of calls,
 * or around one replay of the graph holding the same batch; the slowest rank). Median of {@code reps}
 * rounds after warm-up; the streams are synchronized between rounds, untimed. One rank runs NCCL and the
 * PCIe path with the share given; several ranks on GPU 0 run the PCIe path alone.
 * Usage: {@code GraphCallCost reps callsPerGraph size:ranks:share ...}.
 */
public final class GraphCallCost {
    private GraphCallCost() {
    }

    public static void main(String[] args) {
        int reps = Integer.parseInt(args[0]);
        int calls = Integer.parseInt(args[1]);
        System.out.println("# AllReduce float32, eager vs captured (" + calls + " calls per graph), median of " + reps);
        System.out.println("# size  ranks share  host us/call eager  replayed   device us/call eager  replayed"
                + "   algbw GB/s eager  replayed");
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .build())) {
            for (int a = 2; a < args.length; a++) {
                String[] f = args[a].split(":");
                long size = ByteSizes.parse(f[0]);
                int ranks = Integer.parseInt(f[1]);
                FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                        .set(FlexLinkConfig.SHARE, ranks == 1 ? "pcie=" + f[2] : "auto")
                        .set(FlexLinkConfig.TUNING_CACHE, "off").build();
                double[] t = measure(backend, config, size, ranks, reps, calls);
                System.out.println(String.format(Locale.ROOT, "%6s %5d %5s %14.2f %10.2f %16.1f %10.1f %15.2f %10.2f",
                        f[0], ranks, ranks == 1 ? f[2] : "all", t[0], t[1], t[2], t[3], size / t[2] / 1e3,
                        size / t[3] / 1e3));
            }
        }
    }

    /** {host eager, host replayed, device eager, device replayed}, microseconds per call. */
    static double[] measure(CudaBackend backend, FlexLinkConfig config, long size, int ranks, int reps, int calls) {
        Communicator[] comms = FlexLink.initAll(backend, config, new int[ranks]);
        RuntimeStream[] streams = new RuntimeStream[ranks];
        DeviceMemory[] send = new DeviceMemory[ranks];
        DeviceMemory[] recv = new DeviceMemory[ranks];
        RuntimeEvent[] start = new RuntimeEvent[ranks];
        RuntimeEvent[] end = new RuntimeEvent[ranks];
        long count = size / 4;
        for (int r = 0; r < ranks; r++) {
            streams[r] = backend.createStream(0, "user" + r);
            send[r] = backend.allocate(0, size);
            recv[r] = backend.allocate(0, size);
            CudaMeasurements.randomize(backend, send[r].address(), size, 11 + r);
            start[r] = backend.createEvent(0, true);
            end[r] = backend.createEvent(0, true);
        }
        RuntimeGraph[] graphs = new RuntimeGraph[ranks];
        for (int r = 0; r < ranks; r++) {
            streams[r].beginCapture();
        }
        for (int k = 0; k < calls; k++) {
            call(comms, streams, send, recv, count);
        }
        for (int r = 0; r < ranks; r++) {
            graphs[r] = streams[r].endCapture();
        }
        double[] hostEager = new double[reps];
        double[] hostGraph = new double[reps];
        double[] devEager = new double[reps];
        double[] devGraph = new double[reps];
        for (int i = -3; i < reps; i++) {
            long t0 = System.nanoTime();
            call(comms, streams, send, recv, count);
            long t1 = System.nanoTime();
            sync(streams);
            for (int r = 0; r < ranks; r++) {
                streams[r].record(start[r]);
            }
            for (int k = 0; k < calls; k++) {
                call(comms, streams, send, recv, count);
            }
            for (int r = 0; r < ranks; r++) {
                streams[r].record(end[r]);
            }
            sync(streams);
            double eager = slowest(start, end);
            long t2 = System.nanoTime();
            for (int r = 0; r < ranks; r++) {
                graphs[r].launch(streams[r]);
            }
            long t3 = System.nanoTime();
            sync(streams);
            for (int r = 0; r < ranks; r++) {
                streams[r].record(start[r]);
            }
            for (int r = 0; r < ranks; r++) {
                graphs[r].launch(streams[r]);
            }
            for (int r = 0; r < ranks; r++) {
                streams[r].record(end[r]);
            }
            sync(streams);
            double replayed = slowest(start, end);
            if (i >= 0) {
                hostEager[i] = (t1 - t0) / 1e3;
                hostGraph[i] = (t3 - t2) / 1e3 / calls;
                devEager[i] = eager * 1e3 / calls;
                devGraph[i] = replayed * 1e3 / calls;
            }
        }
        for (int r = 0; r < ranks; r++) {
            graphs[r].close();
        }
        for (int r = 0; r < ranks; r++) {
            comms[r].close();
            streams[r].close();
            send[r].close();
            recv[r].close();
            start[r].close();
            end[r].close();
        }
        return new double[] {CudaMeasurements.median(hostEager), CudaMeasurements.median(hostGraph),
                CudaMeasurements.median(devEager), CudaMeasurements.median(devGraph)};
    }

    private static void call(Communicator[] comms, RuntimeStream[] streams, DeviceMemory[] send, DeviceMemory[] recv,
                             long count) {
        FlexLink.groupStart();
        for (int r = 0; r < comms.length; r++) {
            comms[r].allReduce(send[r].address(), recv[r].address(), count, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
        }
        FlexLink.groupEnd();
    }

    private static void sync(RuntimeStream[] streams) {
        for (RuntimeStream s : streams) {
            s.synchronize();
        }
    }

    /** The slowest rank's elapsed milliseconds. */
    private static double slowest(RuntimeEvent[] start, RuntimeEvent[] end) {
        double ms = 0;
        for (int r = 0; r < start.length; r++) {
            ms = Math.max(ms, end[r].elapsedMillis(start[r]));
        }
        return ms;
    }
}
