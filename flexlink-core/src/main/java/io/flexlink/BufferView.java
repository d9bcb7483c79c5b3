package io.flexlink;

/** A buffer that does not own its memory; equal to another view of the same bytes on the same device. */
record BufferView(long address, long byteSize, int device) implements Buffer {
    @Override
    public String toString() {
        return "Buffer[0x" + Long.toHexString(address) + ", " + byteSize + " B, device " + device + "]";
    }
}
