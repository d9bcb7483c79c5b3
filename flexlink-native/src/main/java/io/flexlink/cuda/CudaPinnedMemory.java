package io.flexlink.cuda;

import static io.flexlink.cuda.NativeAccess.U;

import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RefCount;
import io.flexlink.runtime.shm.ShmSegment;

/**
 * Pinned host memory from {@code cudaHostAlloc(Portable | Mapped)}, visible to every device at
 * {@link #deviceAddress()} (from {@code cuMemHostGetDevicePointer}; the host address itself under UVA).
 * Memory made for sharing is reference-counted: each {@code openShared} takes a reference, each
 * {@code close} drops one, and the last frees it. Memory shared with other processes is instead a
 * mapped {@code /dev/shm} file registered with {@code cudaHostRegister(Portable | Mapped)}; each process
 * has its own device view of it.
 */
final class CudaPinnedMemory implements PinnedMemory {
    private final CudaBackend backend;
    private final long hostAddress;
    private final long deviceAddress;
    private final long byteSize;
    private final String name;
    /** The file mapping (registered with cudaHostRegister) behind memory shared with other processes, else null. */
    private final ShmSegment segment;
    private final RefCount references = new RefCount();

    CudaPinnedMemory(CudaBackend backend, long hostAddress, long deviceAddress, long byteSize, String name) {
        this(backend, hostAddress, deviceAddress, byteSize, name, null);
    }

    CudaPinnedMemory(CudaBackend backend, long hostAddress, long deviceAddress, long byteSize, String name,
                     ShmSegment segment) {
        this.backend = backend;
        this.hostAddress = hostAddress;
        this.deviceAddress = deviceAddress;
        this.byteSize = byteSize;
        this.name = name;
        this.segment = segment;
    }

    ShmSegment segment() {
        return segment;
    }

    /** Takes one more reference; false when the memory was already released. */
    boolean retain() {
        return references.retain();
    }

    @Override
    public long hostAddress() {
        return hostAddress;
    }

    @Override
    public long deviceAddress() {
        return deviceAddress;
    }

    @Override
    public long byteSize() {
        return byteSize;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int readCounter(long offset) {
        return U.getIntVolatile(null, hostAddress + offset);
    }

    /**
     * A plain 4-byte store to pinned memory followed by a full fence: the store leaves the CPU's store
     * buffer before anything after it, and the GPU polls the word over PCIe (no CPU cache involved).
     */
    @Override
    public void writeCounter(long offset, int value) {
        U.putIntVolatile(null, hostAddress + offset, value);
        U.fullFence();
    }

    @Override
    public void close() {
        if (references.release()) {
            backend.releasePinned(this);
        }
    }

    @Override
    public String toString() {
        return "CudaPinnedMemory[" + (name == null ? "" : name + ", ") + byteSize + " B]";
    }
}
