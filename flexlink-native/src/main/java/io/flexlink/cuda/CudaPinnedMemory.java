package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.runtime.SharedPinnedMemory;
import io.flexlink.runtime.shm.ShmSegment;

/**
 * Pinned host memory from {@code cudaHostAlloc(Portable | Mapped)}, visible to every device at
 * {@link #deviceAddress()} (from {@code cuMemHostGetDevicePointer}; the host address itself under UVA).
 * Memory made for sharing is reference-counted: each {@code openShared} takes a reference, each
 * {@code close} drops one, and the last frees it. Memory shared with other processes is instead a
 * mapped {@code /dev/shm} file registered with {@code cudaHostRegister(Portable | Mapped)}; each process
 * has its own device view of it.
 */
final class CudaPinnedMemory extends SharedPinnedMemory {
    private final CudaBackend backend;
    /** The file mapping (registered with cudaHostRegister) behind memory shared with other processes, else null. */
    private final ShmSegment segment;

    CudaPinnedMemory(CudaBackend backend, long hostAddress, long deviceAddress, long byteSize, String name) {
        this(backend, hostAddress, deviceAddress, byteSize, name, null);
    }

    CudaPinnedMemory(CudaBackend backend, long hostAddress, long deviceAddress, long byteSize, String name,
                     ShmSegment segment) {
        super(hostAddress, deviceAddress, byteSize, name);
        this.backend = backend;
        this.segment = segment;
    }

    ShmSegment segment() {
        return segment;
    }

    /**
     * A plain 4-byte store to pinned memory followed by a full fence: the store leaves the CPU's store
     * buffer before anything after it, and the GPU polls the word over PCIe (no CPU cache involved).
     */
    @Override
    public void writeCounter(long offset, int value) {
        UNSAFE.putIntVolatile(null, hostAddress() + offset, value);
        UNSAFE.fullFence();
    }

    @Override
    protected void releaseLast() {
        backend.releasePinned(this);
    }
}
