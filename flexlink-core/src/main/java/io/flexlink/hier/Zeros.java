package io.flexlink.hier;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * Zero-filled device memory that grows on demand: the second operand of the one division an integer AVG
 * makes ({@code (x + 0) / n}, the backend's reduction). Outgrown buffers are kept until {@link #close()},
 * since work already enqueued may still read them; sizes at least double.
 */
final class Zeros implements AutoCloseable {
    private final Backend backend;
    private final int device;
    private final List<DeviceMemory> retired = new ArrayList<>();
    private DeviceMemory current;

    Zeros(Backend backend, int device) {
        this.backend = backend;
        this.device = device;
    }

    long ensure(long bytes) {
        if (current == null || current.byteSize() < bytes) {
            long size = Math.max(Math.max(bytes, 256), current == null ? 0 : 2 * current.byteSize());
            if (current != null) {
                retired.add(current);
            }
            current = backend.allocate(device, size);
            backend.fill(current.address(), size, (byte) 0);
        }
        return current.address();
    }

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
