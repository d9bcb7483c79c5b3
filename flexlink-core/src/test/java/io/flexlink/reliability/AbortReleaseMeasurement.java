package io.flexlink.reliability;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.Arrays;
import java.util.Locale;

/**
 * How long after one rank's {@code abort()} a peer's waits end, on the host backend (issue #13's case):
 * three ranks, ranks 0 and 1 call an 8 MiB AllReduce, rank 2 never calls, rank 0 aborts once rank 1 is
 * blocked; the time until rank 1's calling thread has returned and its stream is idle. With the balancer
 * ({@code share=auto}, the default: rank 1 waits in the balancer's agreement on the host) and with a fixed
 * share (rank 1's PCIe stream waits on a staging word). Not a test: prints the median and maximum of
 * {@code reps} runs. Usage: {@code AbortReleaseMeasurement [reps]}.
 */
public final class AbortReleaseMeasurement {
    private AbortReleaseMeasurement() {
    }

    public static void main(String[] args) throws Exception {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        for (String share : new String[] {"auto", "pcie=0.37"}) {
            double[] ms = new double[reps];
            for (int i = 0; i < reps; i++) {
                ms[i] = once(share);
            }
            Arrays.sort(ms);
            System.out.println(String.format(Locale.ROOT, "share %-10s abort -> peer released: median %.2f ms, "
                    + "max %.2f ms (%d runs)", share, ms[reps / 2], ms[reps - 1], reps));
        }
    }

    private static boolean blocked(Thread caller, RuntimeStream stream) {
        Thread.State s = caller.getState();
        return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING || (!caller.isAlive() && !stream.isIdle());
    }

    private static double once(String share) throws Exception {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, share)
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.TIMEOUT, "0").build();
        long count = 2L << 20; // 8 MiB of floats
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2);
            RuntimeStream[] streams = new RuntimeStream[2];
            DeviceMemory[] bufs = new DeviceMemory[2];
            Thread[] callers = new Thread[2];
            long[] returnedAt = new long[2];
            for (int r = 0; r < 2; r++) {
                int rank = r;
                streams[r] = backend.createStream(r, "user.r" + r);
                bufs[r] = backend.allocate(r, count * 4);
                callers[r] = new Thread(() -> {
                    try {
                        comms[rank].allReduce(bufs[rank], bufs[rank], count, DataType.FLOAT32, ReduceOp.SUM,
                                streams[rank]);
                    } catch (RuntimeException expected) {
                        // the abort ends the call (INVALID_USAGE or REMOTE_ERROR)
                    }
                    returnedAt[rank] = System.nanoTime();
                }, "caller-" + r);
                callers[r].start();
            }
            // rank 1 is blocked once its thread waits on the host, or has returned with its stream still busy
            while (!blocked(callers[1], streams[1])) {
                Thread.onSpinWait();
            }
            Thread.sleep(50); // settle: rank 1 is inside its wait, not on its way into it
            long t0 = System.nanoTime();
            comms[0].abort();
            callers[1].join();
            while (!streams[1].isIdle()) {
                Thread.onSpinWait();
            }
            long t1 = Math.max(System.nanoTime(), returnedAt[1]);
            callers[0].join();
            for (Communicator c : comms) {
                c.abort();
                c.close();
            }
            for (int r = 0; r < 2; r++) {
                while (!streams[r].isIdle()) {
                    Thread.onSpinWait();
                }
                streams[r].close();
                bufs[r].close();
            }
            return (t1 - t0) / 1e6;
        }
    }
}
