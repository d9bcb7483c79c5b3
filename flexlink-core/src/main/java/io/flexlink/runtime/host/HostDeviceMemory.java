package io.flexlink.runtime.host;

import io.flexlink.runtime.OwnedDeviceMemory;

/** Off-heap memory playing one device's memory. */
final class HostDeviceMemory extends OwnedDeviceMemory {
    private final HostBackend backend;

    HostDeviceMemory(HostBackend backend, long address, long byteSize, int device) {
        super(address, byteSize, device);
        this.backend = backend;
    }

    @Override
    protected void release() {
        backend.free(address(), byteSize());
    }
}
