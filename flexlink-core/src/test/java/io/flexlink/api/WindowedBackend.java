package io.flexlink.api;

import io.flexlink.DataType;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.OneSided;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The host backend with a primary transport that has one-sided calls, as NCCL's has: the host ring's communicators,
 * each with a {@link OneSided} that records what the communicator handed it (moving nothing), so that the core's
 * windows can be tested where CI has no NCCL.
 */
final class WindowedBackend extends ForwardingBackend {
    /** What the ranks' one-sided calls were handed, in order, as text. */
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong nextWindow = new AtomicLong(0x5000);

    WindowedBackend(HostBackend host) {
        super(host);
    }

    HostBackend host() {
        return (HostBackend) delegate();
    }

    @Override
    public PrimaryTransport primaryTransport() {
        PrimaryTransport t = delegate().primaryTransport();
        return (PrimaryTransport) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {PrimaryTransport.class}, (p, m, args) -> {
                    Object out = forward(m, t, args);
                    if (out instanceof PrimaryComm c) {
                        return windowed(c);
                    }
                    if (out instanceof PrimaryComm[] cs) {
                        PrimaryComm[] w = new PrimaryComm[cs.length];
                        for (int i = 0; i < cs.length; i++) {
                            w[i] = windowed(cs[i]);
                        }
                        return w;
                    }
                    return out;
                });
    }

    private PrimaryComm windowed(PrimaryComm c) {
        OneSided calls = new Recorder(c.rank());
        return (PrimaryComm) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {PrimaryComm.class},
                (p, m, args) -> m.getName().equals("oneSided") ? calls : forward(m, c, args));
    }

    private static Object forward(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private final class Recorder implements OneSided {
        private final int rank;

        Recorder(int rank) {
            this.rank = rank;
        }

        @Override
        public long registerWindow(long address, long bytes, int flags) {
            long w = nextWindow.getAndIncrement();
            calls.add(rank + " register " + bytes + " flags " + flags + " -> " + w);
            return w;
        }

        @Override
        public void deregisterWindow(long window) {
            calls.add(rank + " deregister " + window);
        }

        @Override
        public long userAddress(long window, long address) {
            calls.add(rank + " userAddress " + window);
            return address;
        }

        @Override
        public void putSignal(long src, long count, DataType type, int peer, long window, long offset, int signal,
                              RuntimeStream stream) {
            calls.add(rank + " put " + count + " " + type + " to " + peer + " window " + window + " at " + offset
                    + " signal " + signal + " on " + stream.label());
        }

        @Override
        public void signal(int peer, int signal, RuntimeStream stream) {
            calls.add(rank + " signal " + peer + " " + signal + " on " + stream.label());
        }

        @Override
        public void waitSignal(int[] peers, int[] signals, int[] counts, RuntimeStream stream) {
            StringBuilder b = new StringBuilder(rank + " wait");
            for (int i = 0; i < peers.length; i++) {
                b.append(' ').append(peers[i]).append('/').append(signals[i]).append('x').append(counts[i]);
            }
            calls.add(b + " on " + stream.label());
        }
    }
}
