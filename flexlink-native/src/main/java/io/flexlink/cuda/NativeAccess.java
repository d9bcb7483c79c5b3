package io.flexlink.cuda;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import sun.misc.Unsafe;

/** Raw access to native memory: counters in pinned memory, kernel parameter blocks, direct buffers. */
final class NativeAccess {
    static final Unsafe U = load();
    private static final long BUFFER_ADDRESS = bufferAddressOffset();

    private NativeAccess() {
    }

    /** The native address of a direct buffer's element 0 (its position is not added). */
    static long address(ByteBuffer direct) {
        return U.getLong(direct, BUFFER_ADDRESS);
    }

    private static long bufferAddressOffset() {
        try {
            return U.objectFieldOffset(java.nio.Buffer.class.getDeclaredField("address"));
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
