package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CallLoop;
import java.lang.reflect.Proxy;
import java.util.Locale;

/**
 * The host time FlexLink's own layers add to a call that does not split, without any backend cost: one rank
 * whose primary communicator's collectives do nothing, an 8-byte in-place AllReduce in a loop. What is left is
 * validation, the plan, the counters and the watchdog's bookkeeping, for a profiler (JFR) to take apart.
 * Usage: {@code CallLayerCost seconds [timeout]} (the watchdog's {@code flexlink.timeout}, default 0: off).
 */
public final class CallLayerCost {
    private CallLayerCost() {
    }

    public static void main(String[] args) {
        double seconds = Double.parseDouble(args[0]);
        String timeout = args.length > 1 ? args[1] : "0";
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.TIMEOUT, timeout)
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (HostBackend host = new HostBackend(config)) {
            PrimaryTransport idle = idle(host.primaryTransport());
            ForwardingBackend backend = new ForwardingBackend(host) {
                @Override
                public PrimaryTransport primaryTransport() {
                    return idle;
                }

                @Override
                public String accessProblem(long address, long bytes, int device) {
                    return null; // as on CUDA, which leaves the addresses to NCCL: the host backend's lookup is not timed
                }

                @Override
                public void close() {
                }
            };
            Communicator comm = FlexLink.initAll(backend, config, 0)[0];
            RuntimeStream s = host.createStream(0, "loop");
            DeviceMemory buf = host.allocate(0, 8);
            long a = buf.address();
            for (int turn = 0; turn < 3; turn++) {
                double us = CallLoop.run(() -> comm.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM, s), s, seconds)
                        .microsPerCall();
                System.out.println(String.format(Locale.ROOT, "turn %d: %.3f us per call (timeout %s)", turn, us,
                        timeout));
            }
            comm.close();
            buf.close();
            s.close();
        }
    }

    /** {@code t}, whose communicators' collectives return at once (the rest is forwarded). */
    private static PrimaryTransport idle(PrimaryTransport t) {
        return (PrimaryTransport) Proxy.newProxyInstance(PrimaryTransport.class.getClassLoader(),
                new Class<?>[] {PrimaryTransport.class}, (p, m, a) -> {
                    Object r = m.invoke(t, a);
                    if (r instanceof PrimaryComm[]) {
                        PrimaryComm[] cs = (PrimaryComm[]) r;
                        for (int i = 0; i < cs.length; i++) {
                            cs[i] = idle(cs[i]);
                        }
                    } else if (r instanceof PrimaryComm) {
                        r = idle((PrimaryComm) r);
                    }
                    return r;
                });
    }

    private static PrimaryComm idle(PrimaryComm c) {
        return (PrimaryComm) Proxy.newProxyInstance(PrimaryComm.class.getClassLoader(),
                new Class<?>[] {PrimaryComm.class}, (p, m, a) -> m.getName().equals("allReduce") ? null : m.invoke(c, a));
    }
}
