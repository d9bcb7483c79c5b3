package io.flexlink.runtime.host;

import java.lang.reflect.Field;
import sun.misc.Unsafe;

/** Raw off-heap memory access for the host backend, which stands in for device memory. */
final class UnsafeAccess {
    static final Unsafe UNSAFE = load();
    /** Offset of {@code java.nio.Buffer.address}, the native address of a direct buffer. */
    static final long BUFFER_ADDRESS = bufferAddressOffset();

    private UnsafeAccess() {
    }

    private static long bufferAddressOffset() {
        try {
            return UNSAFE.objectFieldOffset(java.nio.Buffer.class.getDeclaredField("address"));
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static Unsafe load() {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (Unsafe) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
