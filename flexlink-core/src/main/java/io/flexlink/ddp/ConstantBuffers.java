package io.flexlink.ddp;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Device memory that holds constants, made once when the buckets are built: zeros (the contribution of an
 * unused parameter) and the scale factor per element type. The runtime SPI has stream copies and
 * element-wise reductions but no fill or scalar multiply on a stream, so a zero is a copy from the zeros
 * and a scale is a PROD reduction against a run of the factor; both work the same on every backend, and
 * both are done chunk by chunk so that these buffers stay small whatever the bucket size.
 */
final class ConstantBuffers implements AutoCloseable {
    /** Most elements of one scale reduction and most bytes of one zeroing copy. */
    static final long CHUNK_ELEMENTS = 1 << 18;
    static final long ZERO_CHUNK_BYTES = 1 << 20;

    private final DeviceMemory zeros;
    private final DeviceMemory[] scaleRun = new DeviceMemory[DataType.values().length];
    private final long[] scaleRunElements = new long[DataType.values().length];

    ConstantBuffers(Backend backend, int device, List<Parameter> params, DdpOptions options) {
        long largest = 0;
        long[] elementsByType = new long[DataType.values().length];
        for (Parameter p : params) {
            largest = Math.max(largest, p.bytes());
            elementsByType[p.type().ordinal()] += p.count();
        }
        boolean built = false;
        DeviceMemory z = null;
        try {
            if (options.findUnused()) {
                long bytes = Math.min(largest, ZERO_CHUNK_BYTES);
                z = backend.allocate(device, bytes);
                backend.fill(z.address(), bytes, (byte) 0);
            }
            if (options.scale() != 1.0) {
                for (DataType t : DataType.values()) {
                    if (elementsByType[t.ordinal()] > 0) {
                        long n = Math.min(elementsByType[t.ordinal()], CHUNK_ELEMENTS);
                        scaleRun[t.ordinal()] = run(backend, device, t, n, options.scale());
                        scaleRunElements[t.ordinal()] = n;
                    }
                }
            }
            built = true;
        } finally {
            zeros = z;
            if (!built) {
                close();
            }
        }
    }

    private static DeviceMemory run(Backend backend, int device, DataType t, long n, double value) {
        DeviceMemory m = backend.allocate(device, n * t.size());
        ByteBuffer b = ByteBuffer.allocateDirect((int) (n * t.size())).order(ByteOrder.nativeOrder());
        long bits = FloatFormats.fromDouble(t, value);
        for (long i = 0; i < n; i++) {
            switch (t.size()) {
                case 1: b.put((byte) bits); break;
                case 2: b.putShort((short) bits); break;
                case 4: b.putInt((int) bits); break;
                default: b.putLong(bits);
            }
        }
        b.flip();
        backend.upload(m.address(), b);
        return m;
    }

    /** Enqueues {@code dst[0, bytes) = 0} on {@code s}. */
    void zero(RuntimeStream s, long dst, long bytes) {
        long chunk = zeros.byteSize();
        for (long done = 0; done < bytes; done += chunk) {
            s.copy(dst + done, zeros.address(), Math.min(chunk, bytes - done));
        }
    }

    /** Enqueues {@code dst[i] *= scale} for {@code count} elements of {@code t}; nothing when the scale is 1. */
    void scale(RuntimeStream s, long dst, long count, DataType t) {
        DeviceMemory factor = scaleRun[t.ordinal()];
        if (factor == null) {
            return;
        }
        long chunk = scaleRunElements[t.ordinal()];
        for (long done = 0; done < count; done += chunk) {
            long a = dst + done * t.size();
            s.reduce(a, a, factor.address(), Math.min(chunk, count - done), t, ReduceOp.PROD, 1);
        }
    }

    @Override
    public void close() {
        if (zeros != null) {
            zeros.close();
        }
        for (DeviceMemory m : scaleRun) {
            if (m != null) {
                m.close();
            }
        }
    }
}
