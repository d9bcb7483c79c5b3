package io.flexlink.cuda.bench;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;

/**
 * A long loop of 8-byte AllReduce calls on one rank (synchronized every 1000), for a profiler (JFR) to
 * sample where FlexLink's host time per call goes ({@link StackSampler}).
 * Usage: {@code EightByteLoop seconds}.
 */
public final class EightByteLoop {
    private EightByteLoop() {
    }

    public static void main(String[] args) {
        long seconds = Long.parseLong(args[0]);
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment())) {
            Communicator comm = FlexLink.initAll(backend, FlexLinkConfig.fromEnvironment(), 0)[0];
            RuntimeStream s = backend.createStream(0, "loop");
            DeviceMemory buf = backend.allocate(0, 8);
            long a = buf.address();
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long calls = 0;
            StackSampler sampler = new StackSampler(Thread.currentThread(), "");
            long t0 = System.nanoTime();
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) {
                    comm.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM, s);
                }
                s.synchronize();
                calls += 1000;
            }
            System.out.printf("%d calls, %.3f us per call (with a synchronize every 1000)%n", calls,
                    (System.nanoTime() - t0) / 1e3 / calls);
            sampler.close();
            comm.close();
            buf.close();
            s.close();
        }
    }
}
