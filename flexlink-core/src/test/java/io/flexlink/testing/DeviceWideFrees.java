package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.RuntimeStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A host backend whose frees behave like CUDA's: a device counts as idle only when every stream made on it through
 * this wrapper has run all it was given. The host backend itself answers {@link Backend#deviceIdle} with true
 * (its frees wait for nothing), so the teardown's wait for the device's other streams, and the deadlock it meets
 * when a stream is held by the very thread that tears down, show only through this wrapper.
 */
public final class DeviceWideFrees extends ForwardingBackend {
    /** Each stream made through this wrapper, with its device. */
    private final Map<RuntimeStream, Integer> made = new ConcurrentHashMap<>();

    public DeviceWideFrees(Backend delegate) {
        super(delegate);
    }

    @Override
    public RuntimeStream createStream(int device, String label) {
        RuntimeStream s = super.createStream(device, label);
        made.put(s, device);
        return s;
    }

    @Override
    public boolean deviceIdle(int device) {
        for (Map.Entry<RuntimeStream, Integer> e : made.entrySet()) {
            if (e.getValue() == device && !e.getKey().isIdle()) {
                return false;
            }
        }
        return true;
    }
}
