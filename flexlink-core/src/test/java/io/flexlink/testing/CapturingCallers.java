package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import java.lang.reflect.Method;

/**
 * A backend whose callers' streams ({@code user.*}, as the harnesses name them) say they are being captured into a
 * graph, while the delegate runs their work as usual: the launcher then plans captured calls on a backend without
 * graphs. Everything else is the delegate's.
 */
public final class CapturingCallers extends ProxiedStreams {
    public CapturingCallers(Backend delegate) {
        super(delegate);
    }

    @Override
    protected boolean proxies(String label) {
        return label.startsWith("user");
    }

    @Override
    protected Object answer(String label, Method m, Object[] args) {
        switch (m.getName()) {
            case "isCapturing":
                return true;
            case "pollForDomain":
                return false; // a stream being captured is not asked
            default:
                return FORWARD;
        }
    }
}
