package io.flexlink;

/** A buffer that does not own its memory. */
final class BufferView implements Buffer {
    private final long address;
    private final long byteSize;
    private final int device;

    BufferView(long address, long byteSize, int device) {
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
    public String toString() {
        return "Buffer[0x" + Long.toHexString(address) + ", " + byteSize + " B, device " + device + "]";
    }
}
