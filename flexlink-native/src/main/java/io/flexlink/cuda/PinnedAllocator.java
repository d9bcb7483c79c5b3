package io.flexlink.cuda;

import static io.flexlink.cuda.NativeAccess.U;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.bytedeco.cuda.global.cudart;

/**
 * The CUDA backend's pinned host memory: {@code cudaHostAlloc(Portable | Mapped)}, zero-filled, with
 * its device view from {@code cuMemHostGetDevicePointer}, and the registry of shared staging areas
 * that ranks of this process open by name. Names carry the process id
 * ({@code flexlink-cuda-<pid>-<random>}) so that a multi-process version can later map them from
 * {@code /dev/shm} and {@code cudaHostRegister} them.
 */
final class PinnedAllocator {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final CudaBackend backend;
    private final Map<String, CudaPinnedMemory> shared = new ConcurrentHashMap<>();
    private final AtomicLong liveBytes = new AtomicLong();

    PinnedAllocator(CudaBackend backend) {
        this.backend = backend;
    }

    CudaPinnedMemory allocate(long bytes, String name) {
        if (bytes < 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "bytes: negative size " + bytes);
        }
        RawPointer p = new RawPointer();
        int rc = cudart.cudaHostAlloc(p, Math.max(bytes, 1), cudart.cudaHostAllocPortable | cudart.cudaHostAllocMapped);
        if (rc != 0) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "cudaHostAlloc(" + bytes + " B, Portable|Mapped): "
                    + CudaLibraries.cudaError(rc));
        }
        long[] dev = new long[1];
        int drc = cudart.cuMemHostGetDevicePointer(dev, p, 0);
        if (drc != 0) {
            cudart.cudaFreeHost(p);
            throw CudaCheck.drvError(drc, "cuMemHostGetDevicePointer(" + bytes + " B)");
        }
        U.setMemory(p.address(), Math.max(bytes, 1), (byte) 0);
        liveBytes.addAndGet(bytes);
        return new CudaPinnedMemory(backend, p.address(), dev[0], bytes, name);
    }

    CudaPinnedMemory createShared(long bytes) {
        byte[] id = new byte[8];
        RANDOM.nextBytes(id);
        String name = "flexlink-cuda-" + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(id);
        CudaPinnedMemory m = allocate(bytes, name);
        shared.put(name, m);
        return m;
    }

    CudaPinnedMemory openShared(String name, long bytes) {
        CudaPinnedMemory m = shared.get(name);
        if (m == null || !m.retain()) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "shared memory '" + name + "' is not in this process"
                    + " (the cuda backend shares staging memory between ranks of one process only)");
        }
        if (m.byteSize() < bytes) {
            m.close();
            throw new FlexLinkException(Result.INTERNAL_ERROR,
                    "shared memory '" + name + "' has " + m.byteSize() + " bytes, expected " + bytes);
        }
        return m;
    }

    /** Frees {@code m} once its last reference is gone (cudaFreeHost waits for work using it). */
    void release(CudaPinnedMemory m) {
        if (m.name() != null) {
            shared.remove(m.name());
        }
        int rc = cudart.cudaFreeHost(new RawPointer().set(m.hostAddress()));
        if (rc != 0) {
            CudaBackend.LOG.warn("cudaFreeHost({}): {}", m, CudaLibraries.cudaError(rc));
        }
        liveBytes.addAndGet(-m.byteSize());
    }

    long liveBytes() {
        return liveBytes.get();
    }
}
