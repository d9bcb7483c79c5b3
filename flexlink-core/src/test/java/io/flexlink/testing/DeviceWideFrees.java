package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A host backend that names its busy streams as CUDA's does: every stream made through this wrapper with work left
 * ({@link Backend#busyStreams}). The host backend itself names none (its frees wait for nothing), so the teardown's
 * wait for the device's other streams, and the stall it meets when a held stream waits for a thread that waits
 * for the teardown, show only through this wrapper.
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
    public List<RuntimeStream> busyStreams(int device) {
        List<RuntimeStream> busy = new ArrayList<>();
        made.forEach((s, d) -> {
            if (d == device && !s.isIdle()) {
                busy.add(s);
            }
        });
        return busy;
    }
}
