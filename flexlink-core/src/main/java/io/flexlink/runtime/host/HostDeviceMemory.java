package io.flexlink.runtime.host;

import io.flexlink.runtime.DeviceMemory;
import java.util.concurrent.atomic.AtomicBoolean;

/** Off-heap memory playing one device's memory. */
final class HostDeviceMemory implements DeviceMemory {
    private final HostBackend backend;
    private final long address;
    private final long byteSize;
    private final int device;
    private final AtomicBoolean closed = new AtomicBoolean();

    HostDeviceMemory(HostBackend backend, long address, long byteSize, int device) {
        this.backend = backend;
        this.address = address;
        this.byteSize = byteSize;
        this.device = device;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long byteSize() {
        return byteSize;
    }

    @Override
    public int device() {
        return device;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            backend.free(address, byteSize);
        }
    }

    @Override
    public String toString() {
        return "HostDeviceMemory[" + byteSize + " B, device " + device + "]";
    }
}
