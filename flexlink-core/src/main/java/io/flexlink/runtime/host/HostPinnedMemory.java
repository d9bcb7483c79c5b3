package io.flexlink.runtime.host;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.runtime.SharedPinnedMemory;
import io.flexlink.runtime.shm.ShmSegment;

/**
 * Off-heap memory playing pinned, mapped host memory. Memory made for sharing is reference-counted:
 * each {@code openShared} takes a reference and each {@code close} drops one. Memory shared with other
 * processes is a mapped file ({@link ShmSegment}) instead of malloc'd memory.
 */
final class HostPinnedMemory extends SharedPinnedMemory {
    private final HostBackend backend;
    private final String purpose;
    /** The file mapping behind memory shared with other processes, else null. */
    private final ShmSegment segment;
    private volatile boolean aborted;
    /** Offset of the staging area's abort word ({@link #setAbortWord}), or -1. */
    private volatile long abortWord = -1;

    HostPinnedMemory(HostBackend backend, long address, long byteSize, String name, String purpose) {
        this(backend, address, byteSize, name, purpose, null);
    }

    HostPinnedMemory(HostBackend backend, long address, long byteSize, String name, String purpose,
                     ShmSegment segment) {
        super(address, address, byteSize, name);
        this.backend = backend;
        this.purpose = purpose;
        this.segment = segment;
    }

    ShmSegment segment() {
        return segment;
    }

    HostBackend backend() {
        return backend;
    }

    /** What the memory carries ({@code pcie}, {@code primary}, ...), which link emulation throttles by. */
    String purpose() {
        return purpose;
    }

    @Override
    public void writeCounter(long offset, int value) {
        UNSAFE.putIntVolatile(null, hostAddress() + offset, value);
        CounterSignal.signal(hostAddress() + offset);
    }

    /** Cancels every wait on this memory's counters (communicator abort). */
    void abort() {
        aborted = true;
        CounterSignal.wakeAll();
    }

    /** True once {@link #abort()} ran in this process or any rank set the shared abort word. */
    boolean isAborted() {
        long w = abortWord;
        return aborted || (w >= 0 && UNSAFE.getIntVolatile(null, hostAddress() + w) != 0);
    }

    /** The abort word is shared memory, so that peers in other processes see an abort too. */
    @Override
    public void setAbortWord(long offset) {
        abortWord = offset;
    }

    @Override
    protected void releaseLast() {
        backend.releaseShared(this);
    }
}
