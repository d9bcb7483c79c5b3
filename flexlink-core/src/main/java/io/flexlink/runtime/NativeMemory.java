package io.flexlink.runtime;

import java.lang.reflect.Field;
import java.nio.Buffer;
import sun.misc.Unsafe;

/**
 * Raw access to native memory, for the backends: counters in pinned memory, off-heap buffers standing
 * in for device memory, kernel parameter blocks and the addresses of direct buffers. One place loads
 * {@link Unsafe}, so that both backends and the shared-memory files use the same accessor.
 */
public final class NativeMemory {
    /** The JDK's raw memory accessor. */
    public static final Unsafe UNSAFE = load();
    /** Offset of {@code java.nio.Buffer.address}, the native address of a direct buffer. */
    private static final long BUFFER_ADDRESS = bufferAddressOffset();

    private NativeMemory() {
    }

    /** The native address of a direct buffer's element 0 (its position is not added). */
    public static long address(Buffer direct) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("not a direct buffer: " + direct);
        }
        return UNSAFE.getLong(direct, BUFFER_ADDRESS);
    }

    /** Copies {@code bytes} of native memory from {@code src} to {@code dst} (host memory, on this thread). */
    public static void copy(long src, long dst, long bytes) {
        UNSAFE.copyMemory(src, dst, bytes);
    }

    private static long bufferAddressOffset() {
        try {
            return UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField("address"));
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
