package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RankExchange;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

/**
 * A backend whose primary transport launches a group's collectives only at the group's end, as NCCL does (the host
 * ring enqueues them at once): a collective called between {@code groupStart} and {@code groupEnd} is held and
 * enqueued by {@code groupEnd}, in call order. Sends and receives ({@code exchange}, whose argument the caller
 * reuses) and everything else go through at once.
 */
public final class DeferredPrimary extends ForwardingBackend {
    private final Transport transport;

    public DeferredPrimary(Backend delegate) {
        super(delegate);
        this.transport = new Transport(delegate.primaryTransport());
    }

    @Override
    public PrimaryTransport primaryTransport() {
        return transport;
    }

    private static final class Transport implements PrimaryTransport {
        private final PrimaryTransport real;
        private final List<Runnable> held = new ArrayList<>();
        private int depth;

        Transport(PrimaryTransport real) {
            this.real = real;
        }

        @Override
        public String describe() {
            return real.describe() + " (launched at group end)";
        }

        @Override
        public boolean allowsSharedDevices() {
            return real.allowsSharedDevices();
        }

        @Override
        public PrimaryComm create(RankExchange exchange, int rank, int size, int device) {
            return deferring(real.create(exchange, rank, size, device));
        }

        @Override
        public PrimaryComm[] createAll(int[] devices) {
            PrimaryComm[] comms = real.createAll(devices);
            for (int i = 0; i < comms.length; i++) {
                comms[i] = deferring(comms[i]);
            }
            return comms;
        }

        @Override
        public synchronized void groupStart() {
            depth++;
            real.groupStart();
        }

        @Override
        public void groupEnd() {
            List<Runnable> launch;
            synchronized (this) {
                if (--depth > 0) {
                    real.groupEnd();
                    return;
                }
                launch = new ArrayList<>(held);
                held.clear();
            }
            launch.forEach(Runnable::run);
            real.groupEnd();
        }

        private PrimaryComm deferring(PrimaryComm comm) {
            return (PrimaryComm) Proxy.newProxyInstance(PrimaryComm.class.getClassLoader(),
                    new Class<?>[] {PrimaryComm.class}, (p, m, a) -> {
                        if (isCollective(m)) {
                            synchronized (this) {
                                if (depth > 0) {
                                    held.add(() -> invoke(comm, m, a));
                                    return null;
                                }
                            }
                        }
                        return invokeOrThrow(comm, m, a);
                    });
        }

        private static boolean isCollective(Method m) {
            Class<?>[] types = m.getParameterTypes();
            return m.getReturnType() == void.class && !m.getName().equals("exchange") && types.length > 0
                    && types[types.length - 1] == RuntimeStream.class;
        }

        private static void invoke(PrimaryComm comm, Method m, Object[] a) {
            try {
                invokeOrThrow(comm, m, a);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            }
        }

        private static Object invokeOrThrow(PrimaryComm comm, Method m, Object[] a) throws Throwable {
            try {
                return m.invoke(comm, a);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }
}
