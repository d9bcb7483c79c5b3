package io.flexlink.cuda.bench;

import static io.flexlink.cuda.bench.CudaMeasurements.row;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.cuda.CudaStream;
import io.flexlink.cuda.FlexNccl;
import io.flexlink.runtime.DeviceMemory;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * Parts (c) and (d) of {@link CudaMeasurements}: host enqueue time of an 8-byte AllReduce through
 * FlexLink's communicator, the facade and raw bytedeco NCCL, and the heap bytes each allocates per
 * steady-state call. Runs alone too ({@code EnqueueMeasurements}, no arguments): it uses nothing younger
 * than the first round's API, so that {@code scripts/ab-pack.sh REV} can add it to an older build and one
 * device call can time both builds' small call.
 */
final class EnqueueMeasurements {
    private EnqueueMeasurements() {
    }

    public static void main(String[] args) {
        CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
        try {
            run(backend);
        } finally {
            backend.close();
        }
    }

    interface Call {
        int run();
    }

    /** Median and 90th percentile of per-call host time in µs, over {@code calls} calls in batches of 1000. */
    static double[] enqueueMicros(int calls, Call call, Runnable sync) {
        long[] ns = new long[calls];
        for (int i = 0; i < 20_000; i++) {
            call.run();
            if (i % 1000 == 999) {
                sync.run();
            }
        }
        sync.run();
        for (int i = 0; i < calls; i++) {
            long t0 = System.nanoTime();
            int rc = call.run();
            ns[i] = System.nanoTime() - t0;
            if (rc != 0) {
                throw new IllegalStateException("call failed: " + rc);
            }
            if (i % 1000 == 999) {
                sync.run();
            }
        }
        sync.run();
        Arrays.sort(ns);
        return new double[] {ns[calls / 2] / 1e3, ns[calls * 9 / 10] / 1e3};
    }

    static long bytesPerCall(int calls, Call call, Runnable sync) {
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long before = bean.getThreadAllocatedBytes(tid);
        for (int i = 0; i < calls; i++) {
            call.run();
            if (i % 1000 == 999) {
                sync.run();
            }
        }
        long after = bean.getThreadAllocatedBytes(tid);
        sync.run();
        return (after - before) / calls;
    }

    static void run(CudaBackend backend) {
        System.out.println();
        System.out.println("## (c) host enqueue time of an 8-byte AllReduce on 1 rank, median (p90) of 10^5 calls;"
                + " (d) heap bytes per call over 10^4 calls");
        Communicator comm = FlexLink.initAll(backend, FlexLinkConfig.fromEnvironment(), 0)[0];
        CudaStream s = (CudaStream) backend.createStream(0, "bench.enqueue");
        DeviceMemory buf = backend.allocate(0, 8);
        long a = buf.address();
        Pointer p = new Pointer() {
            {
                address = a; // a bytedeco-style Pointer to the device buffer
            }
        };
        PointerPointer<?> handles = new PointerPointer<>(1);
        PointerPointer<?> facadeHandles = new PointerPointer<>(1);
        check(nccl.ncclCommInitAll(handles, 1, new int[] {0}), "raw ncclCommInitAll");
        check(FlexNccl.ncclCommInitAll(facadeHandles, 1, new int[] {0}), "FlexNccl.ncclCommInitAll");
        ncclComm raw = new ncclComm(handles.get(0));
        ncclComm facade = new ncclComm(facadeHandles.get(0));
        Call flex = () -> {
            comm.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM, s);
            return 0;
        };
        Call viaFacade = () -> FlexNccl.ncclAllReduce(p, p, 2, FlexNccl.ncclFloat, FlexNccl.ncclSum, facade, s.handle());
        Call bytedeco = () -> nccl.ncclAllReduce(p, p, 2, nccl.ncclFloat, nccl.ncclSum, raw, s.handle());
        int calls = 100_000;
        double[] tRaw = enqueueMicros(calls, bytedeco, s::synchronize);
        double[] tFlex = enqueueMicros(calls, flex, s::synchronize);
        double[] tFacade = enqueueMicros(calls, viaFacade, s::synchronize);
        row("%-28s %10s %10s %12s %12s", "call", "median us", "p90 us", "vs raw (us)", "bytes/call");
        row("%-28s %10.2f %10.2f %12s %12d", "bytedeco ncclAllReduce", tRaw[0], tRaw[1], "-",
                bytesPerCall(10_000, bytedeco, s::synchronize));
        row("%-28s %10.2f %10.2f %+12.2f %12d", "FlexLink Communicator", tFlex[0], tFlex[1], tFlex[0] - tRaw[0],
                bytesPerCall(10_000, flex, s::synchronize));
        row("%-28s %10.2f %10.2f %+12.2f %12d", "FlexNccl.ncclAllReduce", tFacade[0], tFacade[1], tFacade[0] - tRaw[0],
                bytesPerCall(10_000, viaFacade, s::synchronize));
        check(FlexNccl.ncclCommDestroy(facade), "FlexNccl.ncclCommDestroy");
        check(nccl.ncclCommDestroy(raw), "ncclCommDestroy");
        comm.close();
        buf.close();
        s.close();
    }

    static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + ": " + rc);
        }
    }
}
