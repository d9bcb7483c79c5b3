package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.cudart.CUmod_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.BytePointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A loaded CUDA module ({@code CUmodule}) on one device's primary context. Owns the handle:
 * {@link #close()} unloads it (idempotent), after which the {@link CUfunc_st} objects it handed out
 * are dangling and must not be launched.
 */
public final class CudaModule implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CudaModule.class);

    private final String name;
    private final int device;
    private final boolean fromCache;
    private final CUmod_st handle;
    private final Map<String, CUfunc_st> functions = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private CudaModule(String name, int device, boolean fromCache, CUmod_st handle) {
        this.name = name;
        this.device = device;
        this.fromCache = fromCache;
        this.handle = handle;
    }

    /**
     * Loads a cubin or NUL-terminated PTX image into the current context, which must be the primary
     * context of {@code device} (the caller has done {@code cudaSetDevice(device)}).
     */
    static CudaModule load(String name, int device, byte[] image, boolean fromCache) {
        CUmod_st mod = new CUmod_st();
        int rc;
        // The driver parses (and for PTX, JIT-compiles) the image during the call; it keeps no reference.
        try (BytePointer img = new BytePointer(image)) {
            rc = cudart.cuModuleLoadData(mod, img);
        }
        if (rc != cudart.CUDA_SUCCESS) {
            throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR,
                    "cuModuleLoadData(" + name + ", device " + device + "): " + CudaLibraries.driverError(rc));
        }
        return new CudaModule(name, device, fromCache, mod);
    }

    /** The kernel {@code functionName} ({@code extern "C"} name), looked up once and cached. */
    public CUfunc_st function(String functionName) {
        Objects.requireNonNull(functionName, "functionName");
        ensureOpen();
        return functions.computeIfAbsent(functionName, this::lookup);
    }

    private CUfunc_st lookup(String functionName) {
        CUfunc_st f = new CUfunc_st();
        int rc = cudart.cuModuleGetFunction(f, handle, functionName);
        if (rc != cudart.CUDA_SUCCESS) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "cuModuleGetFunction(" + name + ", " + functionName + "): " + CudaLibraries.driverError(rc));
        }
        return f;
    }

    /** Name the module was compiled under (the resource or source name). */
    public String name() {
        return name;
    }

    /** CUDA ordinal whose primary context holds the module. */
    public int device() {
        return device;
    }

    /** True when the image came from the on-disk kernel cache rather than a fresh NVRTC compile. */
    public boolean fromCache() {
        return fromCache;
    }

    /** The raw {@code CUmodule}; valid until {@link #close()}. */
    public CUmod_st handle() {
        ensureOpen();
        return handle;
    }

    public boolean isClosed() {
        return closed.get();
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException("CUDA module " + name + " is closed");
        }
    }

    /** Unloads the module; later calls do nothing. Errors are logged, not thrown (close runs on cleanup paths). */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        functions.clear();
        int[] current = new int[1];
        boolean switched = cudart.cudaGetDevice(current) == cudart.cudaSuccess && current[0] != device
                && cudart.cudaSetDevice(device) == cudart.cudaSuccess;
        try {
            int rc = cudart.cuModuleUnload(handle);
            if (rc != cudart.CUDA_SUCCESS) {
                LOG.warn("cuModuleUnload({}): {}", name, CudaLibraries.driverError(rc));
            }
        } finally {
            if (switched) {
                cudart.cudaSetDevice(current[0]);
            }
            handle.setNull();
        }
    }

    @Override
    public String toString() {
        return "CudaModule[" + name + ", device " + device + (fromCache ? ", cached" : "") + (isClosed() ? ", closed" : "") + "]";
    }
}
