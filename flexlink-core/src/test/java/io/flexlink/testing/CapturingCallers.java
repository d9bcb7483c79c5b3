package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A backend whose callers' streams ({@code user.*}, as the harnesses name them) say they are being captured into a
 * graph, while the delegate runs their work as usual: the launcher then plans captured calls on a backend without
 * graphs. Everything else is the delegate's.
 */
public final class CapturingCallers extends ForwardingBackend {
    private final Set<RuntimeStream> made = ConcurrentHashMap.newKeySet();

    public CapturingCallers(Backend delegate) {
        super(delegate);
    }

    @Override
    public RuntimeStream runtimeStream(io.flexlink.Stream stream) {
        return stream instanceof RuntimeStream && made.contains(stream) ? (RuntimeStream) stream
                : super.runtimeStream(stream);
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        RuntimeStream s = super.createStream(device, label);
        if (!label.startsWith("user")) {
            return s;
        }
        RuntimeStream capturing = (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (p, m, a) -> {
                    if (m.getName().equals("isCapturing")) {
                        return true;
                    }
                    if (m.getName().equals("pollForDomain")) {
                        return false; // a stream being captured is not asked
                    }
                    try {
                        return m.invoke(s, a);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        made.add(capturing);
        return capturing;
    }
}
