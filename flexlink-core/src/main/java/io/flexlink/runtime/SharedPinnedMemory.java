package io.flexlink.runtime;

/**
 * The part every backend's {@link PinnedMemory} shares: the mapping's addresses, its name, counter reads,
 * and the reference count of memory that several ranks of one process open by name. Each open takes a
 * reference ({@link #retain()}), each {@link #close()} drops one, and the last runs {@link #releaseLast()}.
 * Backends differ in how a counter write reaches the waiters, so {@link #writeCounter} is theirs.
 */
public abstract class SharedPinnedMemory implements PinnedMemory {
    private final long hostAddress;
    private final long deviceAddress;
    private final long byteSize;
    private final String name;
    private final RefCount references = new RefCount();

    protected SharedPinnedMemory(long hostAddress, long deviceAddress, long byteSize, String name) {
        this.hostAddress = hostAddress;
        this.deviceAddress = deviceAddress;
        this.byteSize = byteSize;
        this.name = name;
    }

    /** Takes one more reference; false when the memory was already released. */
    public final boolean retain() {
        return references.retain();
    }

    @Override
    public final long hostAddress() {
        return hostAddress;
    }

    @Override
    public final long deviceAddress() {
        return deviceAddress;
    }

    @Override
    public final long byteSize() {
        return byteSize;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final int readCounter(long offset) {
        return NativeMemory.UNSAFE.getIntVolatile(null, hostAddress + offset);
    }

    /** Frees the memory; run once, by the close that drops the last reference. */
    protected abstract void releaseLast();

    @Override
    public final void close() {
        if (references.release()) {
            releaseLast();
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + (name == null ? "" : name + ", ") + byteSize + " B]";
    }
}
