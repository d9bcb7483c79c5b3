package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.shm.ShmSegment;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.bytedeco.cuda.global.cudart;

/**
 * The CUDA backend's pinned host memory: {@code cudaHostAlloc(Portable | Mapped)}, zero-filled, with
 * its device view from {@code cuMemHostGetDevicePointer}, and the registry of shared staging areas
 * that ranks of this process open by name ({@code flexlink-cuda-<pid>-<random>}). Memory for ranks in
 * other processes is a {@code /dev/shm} file ({@link ShmSegment}) that each process maps and pins with
 * {@code cudaHostRegister}.
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
        UNSAFE.setMemory(p.address(), Math.max(bytes, 1), (byte) 0);
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

    /** Maps a fresh {@code /dev/shm} file in {@code dir} for ranks in other processes and pins it. */
    CudaPinnedMemory createCrossProcess(long bytes, Path dir) {
        return register(ShmSegment.create(dir, bytes));
    }

    /**
     * Staging bound to NUMA nodes: a {@code /dev/shm} mapping whose regions are bound to their GPUs' nodes
     * (moving the zeroed pages) before {@code cudaHostRegister} pins them; pinned pages could not move.
     * Other ranks, in this process or another, map the file by its name (the policy belongs to the file's
     * pages, so every mapping sees them where they were bound).
     */
    CudaPinnedMemory createPlaced(long bytes, Path dir, io.flexlink.runtime.MemoryPlacement placement,
                                  io.flexlink.topo.Topology topology, boolean force) {
        ShmSegment seg = ShmSegment.create(dir, bytes);
        try {
            int bound = NumaPlacement.bind(seg.address(), seg.mappedBytes(), placement, topology, force);
            CudaBackend.LOG.debug("INIT numa: staging of {} B, {} of {} regions bound", bytes, bound,
                    placement.regions());
        } catch (RuntimeException | Error e) {
            seg.close(); // unmaps and unlinks: no file left in /dev/shm
            throw e;
        }
        return register(seg);
    }

    /** Maps and pins the file another process made with {@link #createCrossProcess}. */
    CudaPinnedMemory openCrossProcess(String name, long bytes, java.nio.file.Path dir) {
        return register(ShmSegment.open(dir, name, bytes));
    }

    /**
     * Pins a file mapping and maps it into every device's address space ({@code cudaHostRegister(Portable |
     * Mapped)}); this process's streams wait on its counters through its own device pointer.
     */
    private CudaPinnedMemory register(ShmSegment seg) {
        boolean registered = false;
        RawPointer p = new RawPointer().set(seg.address());
        try {
            int rc = cudart.cudaHostRegister(p, seg.mappedBytes(),
                    cudart.cudaHostRegisterPortable | cudart.cudaHostRegisterMapped);
            if (rc != 0) {
                throw new FlexLinkException(Result.SYSTEM_ERROR, "cudaHostRegister(" + seg + ", Portable|Mapped): "
                        + CudaLibraries.cudaError(rc));
            }
            registered = true;
            long[] dev = new long[1];
            int drc = cudart.cuMemHostGetDevicePointer(dev, p, 0);
            if (drc != 0) {
                throw CudaCheck.drvError(drc, "cuMemHostGetDevicePointer(" + seg + ")");
            }
            CudaPinnedMemory m = new CudaPinnedMemory(backend, seg.address(), dev[0], seg.byteSize(), seg.name(), seg);
            liveBytes.addAndGet(seg.byteSize());
            return m;
        } catch (RuntimeException | Error e) {
            // any failure (also cudart failing to load) unpins and closes the file: no /dev/shm leftover
            if (registered) {
                cudart.cudaHostUnregister(p);
            }
            seg.close();
            throw e;
        }
    }

    /** Frees {@code m} once its last reference is gone (cudaFreeHost waits for work using it). */
    void release(CudaPinnedMemory m) {
        if (m.segment() != null) {
            // unpin before unmapping: the pages must not vanish under a registration
            int rc = cudart.cudaHostUnregister(new RawPointer().set(m.hostAddress()));
            if (rc != 0) {
                CudaBackend.LOG.warn("cudaHostUnregister({}): {}", m, CudaLibraries.cudaError(rc));
            }
            m.segment().close();
            liveBytes.addAndGet(-m.byteSize());
            return;
        }
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
