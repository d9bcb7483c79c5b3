package io.flexlink;

/**
 * A region of memory a collective reads or writes: device memory of one device (on the host backend,
 * off-heap memory standing in for it). Collectives take buffers so that they can check counts against
 * sizes; the address-based overloads of {@link Communicator} skip that check, as NCCL does.
 */
public interface Buffer {
    /** The device address of the first byte. */
    long address();

    /** Size in bytes; {@link Long#MAX_VALUE} when it is not known (a wrapped foreign pointer). */
    long byteSize();

    /** The device ordinal the memory lives on. */
    int device();

    /** A view of {@code bytes} bytes starting {@code offset} bytes into this buffer. */
    default Buffer slice(long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > byteSize() || bytes > byteSize() - offset) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "slice: [" + offset + ", +" + bytes + ") is outside a buffer of " + byteSize() + " bytes");
        }
        return new BufferView(address() + offset, bytes, device());
    }

    /** Wraps memory owned elsewhere (for instance a framework's tensor) without taking ownership. */
    static Buffer wrap(long address, long byteSize, int device) {
        return new BufferView(address, byteSize, device);
    }
}
