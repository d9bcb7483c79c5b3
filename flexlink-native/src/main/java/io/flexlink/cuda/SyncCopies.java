package io.flexlink.cuda;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.NativeMemory;
import java.nio.ByteBuffer;
import org.bytedeco.cuda.cudart.cudaPointerAttributes;
import org.bytedeco.cuda.global.cudart;

/**
 * {@link Backend#upload}, {@link Backend#download} and {@link Backend#fill}: synchronous, on one
 * internal non-blocking stream per device. Not the legacy default stream: FlexLink's streams do not
 * synchronize with it, and not {@code cudaDeviceSynchronize}: a stream blocked on a counter would
 * make it wait forever. The copy is complete on the device when a call returns.
 */
final class SyncCopies implements AutoCloseable {
    private final CudaBackend backend;
    private final CudaStream[] helpers;

    SyncCopies(CudaBackend backend, int devices) {
        this.backend = backend;
        this.helpers = new CudaStream[devices];
    }

    /** The helper stream of the device {@code address} lives on (device 0 for host memory). */
    private CudaStream helper(long address) {
        int device = 0;
        try (cudaPointerAttributes at = new cudaPointerAttributes()) {
            if (cudart.cudaPointerGetAttributes(at, new RawPointer().set(address)) == 0
                    && at.type() == cudart.cudaMemoryTypeDevice && at.device() >= 0 && at.device() < helpers.length) {
                device = at.device();
            }
        }
        synchronized (helpers) {
            if (helpers[device] == null) {
                helpers[device] = new CudaStream(backend, device, "helper.d" + device,
                        CudaBackend.newStream(device, "helper"), true);
            }
            return helpers[device];
        }
    }

    void upload(long dst, ByteBuffer src) {
        int n = src.remaining();
        ByteBuffer direct = src;
        if (!src.isDirect()) {
            direct = ByteBuffer.allocateDirect(n);
            direct.put(src.duplicate()).flip();
        }
        long from = NativeMemory.address(direct) + direct.position();
        CudaStream h = helper(dst);
        synchronized (h) {
            h.copy(dst, from, n);
            h.synchronize();
        }
    }

    void download(ByteBuffer dst, long src) {
        int n = dst.remaining();
        ByteBuffer direct = dst.isDirect() ? dst : ByteBuffer.allocateDirect(n);
        long to = NativeMemory.address(direct) + direct.position();
        CudaStream h = helper(src);
        synchronized (h) {
            h.copy(to, src, n);
            h.synchronize();
        }
        if (direct != dst) {
            dst.duplicate().put(direct);
        }
    }

    void fill(long dst, long bytes, byte value) {
        CudaStream h = helper(dst);
        synchronized (h) {
            CudaCheck.rt(cudart.cudaMemsetAsync(new RawPointer().set(dst), value & 0xff, bytes, h.handle()),
                    "cudaMemsetAsync(" + bytes + " B)");
            h.synchronize();
        }
    }

    @Override
    public void close() {
        synchronized (helpers) {
            for (int i = 0; i < helpers.length; i++) {
                if (helpers[i] != null) {
                    helpers[i].close();
                    helpers[i] = null;
                }
            }
        }
    }
}
