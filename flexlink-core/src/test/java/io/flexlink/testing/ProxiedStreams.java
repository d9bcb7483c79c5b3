package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A backend whose streams (those {@link #proxies} picks by label) are proxies that may answer or watch some calls
 * themselves and hand the others to the delegate's stream; a proxy given back as a caller's stream is taken as the
 * stream it is. Everything else is the delegate's.
 */
public abstract class ProxiedStreams extends ForwardingBackend {
    /** What {@link #answer} returns to let the delegate's stream answer. */
    protected static final Object FORWARD = new Object();

    private final Set<RuntimeStream> made = ConcurrentHashMap.newKeySet();

    protected ProxiedStreams(Backend delegate) {
        super(delegate);
    }

    /** Whether streams labelled {@code label} are proxied. */
    protected abstract boolean proxies(String label);

    /** The proxy's own answer to {@code m} on the stream labelled {@code label}, or {@link #FORWARD}. */
    protected abstract Object answer(String label, Method m, Object[] args);

    @Override
    public RuntimeStream runtimeStream(io.flexlink.Stream stream) {
        return stream instanceof RuntimeStream && made.contains(stream) ? (RuntimeStream) stream
                : super.runtimeStream(stream);
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        RuntimeStream s = super.createStream(device, label);
        if (!proxies(label)) {
            return s;
        }
        RuntimeStream proxy = (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (p, m, a) -> {
                    if (m.getName().equals("equals") && a != null && a.length == 1) {
                        return p == a[0]; // a proxy is itself, as a stream is: not the stream it forwards to
                    }
                    if (m.getName().equals("hashCode") && (a == null || a.length == 0)) {
                        return System.identityHashCode(p);
                    }
                    Object own = answer(label, m, a);
                    if (own != FORWARD) {
                        return own;
                    }
                    try {
                        return m.invoke(s, a);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        made.add(proxy);
        return proxy;
    }
}
