package io.flexlink.nvshmem;

/**
 * One {@code nvshmem_malloc} allocation of a {@link NvshmemSession}: the same size at the same place in
 * every PE's symmetric heap. Freeing is collective in NVSHMEM while closing a communicator is not, so
 * {@link #close()} only retires the buffer; the session frees it during a later collective setup, once
 * every PE has retired it.
 */
public final class SymmetricBuffer implements AutoCloseable {
    private final NvshmemSession session;
    private final long id;
    private final long address;
    private final long bytes;
    private boolean closed;

    SymmetricBuffer(NvshmemSession session, long id, long address, long bytes) {
        this.session = session;
        this.id = id;
        this.address = address;
        this.bytes = bytes;
    }

    /** The allocation's number in its session, the same on every PE. */
    long id() {
        return id;
    }

    /** The local address; NVSHMEM maps it to the same object on any PE. */
    public long address() {
        return address;
    }

    public long byteSize() {
        return bytes;
    }

    /** Retires the buffer (freed collectively later); idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        session.retire(this);
    }

    @Override
    public String toString() {
        return "SymmetricBuffer[#" + id + ", 0x" + Long.toHexString(address) + ", " + bytes + " B]";
    }
}
