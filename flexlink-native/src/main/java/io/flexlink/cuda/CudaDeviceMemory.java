package io.flexlink.cuda;

import io.flexlink.runtime.OwnedDeviceMemory;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One {@code cudaMalloc} allocation; {@link #close()} frees it once. */
final class CudaDeviceMemory extends OwnedDeviceMemory {
    private static final Logger LOG = LoggerFactory.getLogger(CudaDeviceMemory.class);

    private final CudaBackend backend;

    CudaDeviceMemory(CudaBackend backend, long address, long byteSize, int device) {
        super(address, byteSize, device);
        this.backend = backend;
    }

    @Override
    protected void release() {
        int previous = Devices.enter(device());
        try {
            int rc = cudart.cudaFree(new RawPointer().set(address()));
            if (rc != 0) {
                LOG.warn("cudaFree({} B on device {}): {}", byteSize(), device(), CudaLibraries.cudaError(rc));
            }
        } finally {
            Devices.exit(previous);
            backend.freed(byteSize());
        }
    }
}
