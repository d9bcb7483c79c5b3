package io.flexlink.runtime;

import java.util.ArrayList;
import java.util.List;

/**
 * Device scratch memory that grows on demand. Growing must not wait for the device (one thread may be
 * enqueueing for several ranks that wait on each other), so a buffer that is outgrown is retired, not
 * freed, until {@link #close()}; sizes at least double, so retired buffers never exceed the live one.
 */
public final class Scratch implements AutoCloseable {
    private final Backend backend;
    private final int device;
    private final List<DeviceMemory> retired = new ArrayList<>();
    private DeviceMemory current;

    public Scratch(Backend backend, int device) {
        this.backend = backend;
        this.device = device;
    }

    /** The address of at least {@code bytes} bytes of scratch on this device. */
    public long ensure(long bytes) {
        if (current == null || current.byteSize() < bytes) {
            long size = Math.max(Math.max(bytes, 1), current == null ? 0 : 2 * current.byteSize());
            if (current != null) {
                retired.add(current);
            }
            current = backend.allocate(device, size);
        }
        return current.address();
    }

    /** Frees every buffer; call only when no enqueued work can still use them. Idempotent. */
    @Override
    public void close() {
        for (DeviceMemory m : retired) {
            m.close();
        }
        retired.clear();
        if (current != null) {
            current.close();
            current = null;
        }
    }
}
