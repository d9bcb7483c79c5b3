package io.flexlink.cuda;

import io.flexlink.runtime.DeviceMemory;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One {@code cudaMalloc} allocation; {@link #close()} frees it once. */
final class CudaDeviceMemory implements DeviceMemory {
    private static final Logger LOG = LoggerFactory.getLogger(CudaDeviceMemory.class);

    private final CudaBackend backend;
    private final long address;
    private final long byteSize;
    private final int device;
    private final AtomicBoolean closed = new AtomicBoolean();

    CudaDeviceMemory(CudaBackend backend, long address, long byteSize, int device) {
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
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        int previous = Devices.enter(device);
        try {
            int rc = cudart.cudaFree(new RawPointer().set(address));
            if (rc != 0) {
                LOG.warn("cudaFree({} B on device {}): {}", byteSize, device, CudaLibraries.cudaError(rc));
            }
        } finally {
            Devices.exit(previous);
            backend.freed(byteSize);
        }
    }

    @Override
    public String toString() {
        return "CudaDeviceMemory[0x" + Long.toHexString(address) + ", " + byteSize + " B, device " + device + "]";
    }
}
