package io.flexlink.runtime;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The part every backend's {@link DeviceMemory} shares: the region it owns and a {@link #close()} that
 * hands it back exactly once, however many threads close it.
 */
public abstract class OwnedDeviceMemory implements DeviceMemory {
    private final long address;
    private final long byteSize;
    private final int device;
    private final AtomicBoolean closed = new AtomicBoolean();

    protected OwnedDeviceMemory(long address, long byteSize, int device) {
        this.address = address;
        this.byteSize = byteSize;
        this.device = device;
    }

    @Override
    public final long address() {
        return address;
    }

    @Override
    public final long byteSize() {
        return byteSize;
    }

    @Override
    public final int device() {
        return device;
    }

    /** Frees the memory; called once, by the first {@link #close()}. */
    protected abstract void release();

    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            release();
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[0x" + Long.toHexString(address) + ", " + byteSize + " B, device "
                + device + "]";
    }
}
