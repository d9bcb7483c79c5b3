package io.flexlink.cuda.ddp;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.CudaLibraries;
import io.flexlink.cuda.CudaModule;
import io.flexlink.cuda.CudaStream;
import io.flexlink.cuda.Devices;
import io.flexlink.cuda.KernelCompiler;
import io.flexlink.runtime.RuntimeStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * One kernel of an NVRTC-compiled {@link CudaModule}, launched on FlexLink's CUDA streams with a parameter
 * block that is allocated once and reused, so that a launch allocates nothing. Each parameter occupies an
 * 8-byte slot; {@code cuLaunchKernel} reads as many bytes as the kernel's parameter has, so an {@code int}
 * or {@code float} goes in the slot's low four bytes (little-endian). The driver copies the parameters
 * during the call, so they may be changed for the next launch at once. One thread uses an instance at a
 * time.
 */
public final class StreamKernel implements AutoCloseable {
    private static final Object LOAD = new Object();

    private final CudaModule module;
    private final String name;
    private final CUfunc_st function;
    private final int params;
    private final LongPointer values;
    private final PointerPointer<?> pointers;
    private boolean closed;

    /** The kernel {@code function} of {@code module}, which takes {@code params} parameters. */
    public StreamKernel(CudaModule module, String function, int params) {
        if (params < 1 || params > 32) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "params: " + params + " is not in [1, 32]");
        }
        this.module = module;
        this.name = function;
        this.function = module.function(function);
        this.params = params;
        this.values = new LongPointer(params);
        this.pointers = new PointerPointer<>(params);
        for (int i = 0; i < params; i++) {
            UNSAFE.putLong(pointers.address() + 8L * i, values.address() + 8L * i);
        }
    }

    private long slot(int i) {
        if (i < 0 || i >= params) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "i: parameter " + i + " of " + name + ", which has "
                    + params);
        }
        return values.address() + 8L * i;
    }

    /** Sets parameter {@code i} to a 64-bit value: a device address or an {@code unsigned long long}. */
    public StreamKernel arg(int i, long v) {
        UNSAFE.putLong(slot(i), v);
        return this;
    }

    /** Sets parameter {@code i} to an {@code int}. */
    public StreamKernel argInt(int i, int v) {
        long s = slot(i);
        UNSAFE.putLong(s, 0);
        UNSAFE.putInt(s, v);
        return this;
    }

    /** Sets parameter {@code i} to a {@code float}. */
    public StreamKernel argFloat(int i, float v) {
        long s = slot(i);
        UNSAFE.putLong(s, 0);
        UNSAFE.putFloat(s, v);
        return this;
    }

    /** Enqueues the kernel on {@code stream} (a CUDA stream of the module's device) with the parameters set. */
    public void launch(RuntimeStream stream, int gridX, int gridY, int blockX, int blockY) {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, "kernel " + name + ": closed");
        }
        if (!(stream instanceof CudaStream)) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "stream: " + stream + " is not a CUDA stream");
        }
        if (stream.device() != module.device()) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "stream: on device " + stream.device()
                    + ", but kernel " + name + " is loaded on device " + module.device());
        }
        if (gridX < 1 || gridY < 1 || gridY > 65535 || blockX < 1 || blockY < 1 || blockX * blockY > 1024) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "grid: " + gridX + "x" + gridY + " blocks of "
                    + blockX + "x" + blockY + " threads cannot be launched");
        }
        CudaStream cs = (CudaStream) stream;
        int previous = Devices.enter(cs.device());
        int rc;
        try {
            rc = cudart.cuLaunchKernel(function, gridX, gridY, 1, blockX, blockY, 1, 0, cs.handle(), pointers,
                    (PointerPointer<?>) null);
        } finally {
            Devices.exit(previous);
        }
        if (rc != cudart.CUDA_SUCCESS) {
            throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "cuLaunchKernel(" + name + ", grid " + gridX + "x"
                    + gridY + ", block " + blockX + "x" + blockY + ") on stream " + cs.label() + ": "
                    + CudaLibraries.driverError(rc));
        }
    }

    /**
     * Compiles (or takes from the cache) {@code source} for {@code device} and loads it, one load at a time in
     * this process: ranks that are threads build their kernels at once, and FlexLink's own kernels are loaded
     * under a lock too.
     */
    public static CudaModule load(KernelCompiler compiler, int device, String name, String source) {
        synchronized (LOAD) {
            return compiler.load(device, name, source, List.of());
        }
    }

    /** Blocks of {@code threads} threads for a grid-stride loop over {@code count} elements, capped at {@code max}. */
    public static int blocks(long count, int threads, int max) {
        return (int) Math.max(1, Math.min((count + threads - 1) / threads, max));
    }

    /** The text of the classpath resource {@code resource} next to {@code anchor}. */
    public static String source(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            if (in == null) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, "kernel source not on the classpath: " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "cannot read " + resource + ": " + e, e);
        }
    }

    /** Frees the parameter block (the module stays with its owner); idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            pointers.close();
            values.close();
        }
    }
}
