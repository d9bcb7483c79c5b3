package io.flexlink.testing;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A whole allocation read back to a direct buffer of the platform's byte order, for assertions on it. */
public final class Downloads {
    private Downloads() {
    }

    public static ByteBuffer download(Backend backend, DeviceMemory m) {
        ByteBuffer out = ByteBuffer.allocateDirect((int) m.byteSize()).order(ByteOrder.nativeOrder());
        backend.download(out, m.address());
        return out;
    }
}
