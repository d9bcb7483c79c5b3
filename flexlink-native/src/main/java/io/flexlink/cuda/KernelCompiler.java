package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.global.nvrtc;
import org.bytedeco.cuda.nvrtc._nvrtcProgram;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.SizeTPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compiles CUDA C source with NVRTC for a device's architecture, caches the image on disk and loads
 * it as a {@link CudaModule}.
 *
 * <p>Where NVRTC supports the device's {@code sm_XY}, it produces a cubin ({@code -arch=sm_XY},
 * {@code nvrtcGetCUBIN}); for a device newer than this NVRTC it produces PTX for the highest
 * {@code compute_ZZ <= XY}, which the driver JIT-compiles at load. Compiles happen on the INIT path
 * only (about 100 ms each); the steady state never reaches this class.
 */
public final class KernelCompiler {
    private static final Logger LOG = LoggerFactory.getLogger(KernelCompiler.class);

    private final KernelCache cache;
    private final AtomicInteger compilations = new AtomicInteger();
    private final AtomicInteger cacheHits = new AtomicInteger();
    private volatile String nvrtcVersion;

    /** Caches under {@code ${user.home}/.cache/flexlink/kernels}. */
    public KernelCompiler() {
        this(KernelCache.defaultDirectory());
    }

    public KernelCompiler(Path cacheDirectory) {
        this.cache = new KernelCache(cacheDirectory);
    }

    /** A compile failure; {@link #log()} is NVRTC's program log. */
    public static final class CompileException extends FlexLinkException {
        private static final long serialVersionUID = 1L;
        private final String log;

        CompileException(String message, String log) {
            super(Result.INTERNAL_ERROR, log.isBlank() ? message : message + "\n" + log);
            this.log = log;
        }

        public String log() {
            return log;
        }
    }

    /** The target of one compile: NVRTC's {@code -arch} value and whether it yields a cubin. */
    record Target(String arch, boolean cubin) {
    }

    /** Loads the classpath resource {@code resource} (e.g. {@code /io/flexlink/cuda/reduce.cu}) for the current device. */
    public CudaModule loadResource(String resource, List<String> options) {
        String source = readResource(resource);
        requireNvrtc();
        return load(currentDevice(), resource, source, options);
    }

    /** Compiles (or takes from the cache) {@code source} for the calling thread's current device and loads it there. */
    public CudaModule load(String name, String source, List<String> options) {
        requireNvrtc();
        return load(currentDevice(), name, source, options);
    }

    /**
     * Compiles (or takes from the cache) {@code source} for {@code device} and loads it into that
     * device's primary context. The calling thread's current device is restored afterwards.
     *
     * @param options extra NVRTC options (e.g. {@code -std=c++17}); {@code -arch} is added here
     */
    public CudaModule load(int device, String name, String source, List<String> options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(source, "source");
        List<String> opts = List.copyOf(options);
        requireNvrtc();
        int previous = currentDevice();
        check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
        try {
            Target target = target(device);
            String key = KernelCache.key(source, target.arch(), nvrtcVersion(), opts);
            byte[] image = cache.read(key).orElse(null);
            boolean hit = image != null;
            if (hit) {
                cacheHits.incrementAndGet();
                LOG.debug("kernel {} for {}: cache hit {}", name, target.arch(), key.substring(0, 12));
            } else {
                long t0 = System.nanoTime();
                image = compile(name, source, target, opts);
                compilations.incrementAndGet();
                LOG.info("INIT compiled kernel {} for {} ({} bytes, {} ms, NVRTC {})", name, target.arch(),
                        image.length, (System.nanoTime() - t0) / 1_000_000, nvrtcVersion());
                cache.write(key, image);
            }
            return CudaModule.load(name, device, image, hit);
        } finally {
            if (previous != device) {
                cudart.cudaSetDevice(previous);
            }
        }
    }

    // Before any org.bytedeco.cuda class is touched: where CUDA is absent they throw NoClassDefFoundError.
    private static void requireNvrtc() {
        if (!CudaLibraries.nvrtcAvailable()) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "NVRTC unavailable: " + CudaLibraries.nvrtcUnavailableReason());
        }
    }

    /** NVRTC compiles run by this compiler (cache misses). */
    public int compilations() {
        return compilations.get();
    }

    /** Loads served from the on-disk cache. */
    public int cacheHits() {
        return cacheHits.get();
    }

    public Path cacheDirectory() {
        return cache.directory();
    }

    /** NVRTC's version, e.g. {@code 13.0}. */
    public String nvrtcVersion() {
        String v = nvrtcVersion;
        if (v == null) {
            requireNvrtc();
            int[] major = new int[1];
            int[] minor = new int[1];
            checkNvrtc(nvrtc.nvrtcVersion(major, minor), "nvrtcVersion");
            v = major[0] + "." + minor[0];
            nvrtcVersion = v;
        }
        return v;
    }

    /** Chooses the NVRTC target for {@code device}: its own sm_XY if supported, else PTX for the best older compute_ZZ. */
    static Target target(int device) {
        int cc = computeCapability(device);
        int[] n = new int[1];
        checkNvrtc(nvrtc.nvrtcGetNumSupportedArchs(n), "nvrtcGetNumSupportedArchs");
        int[] archs = new int[n[0]];
        checkNvrtc(nvrtc.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs");
        return chooseTarget(cc, archs);
    }

    /** Pure part of {@link #target}: {@code cc} is major*10+minor, {@code supported} NVRTC's list. */
    static Target chooseTarget(int cc, int[] supported) {
        int best = -1;
        for (int a : supported) {
            if (a == cc) {
                return new Target("sm_" + cc, true);
            }
            if (a < cc && a > best) {
                best = a;
            }
        }
        if (best < 0) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "NVRTC supports no architecture <= sm_" + cc);
        }
        return new Target("compute_" + best, false);
    }

    private static int computeCapability(int device) {
        int[] major = new int[1];
        int[] minor = new int[1];
        check(cudart.cudaDeviceGetAttribute(major, cudart.cudaDevAttrComputeCapabilityMajor, device), "compute capability");
        check(cudart.cudaDeviceGetAttribute(minor, cudart.cudaDevAttrComputeCapabilityMinor, device), "compute capability");
        return major[0] * 10 + minor[0];
    }

    private static byte[] compile(String name, String source, Target target, List<String> extra) {
        List<String> all = new ArrayList<>(extra.size() + 1);
        all.add("-arch=" + target.arch());
        all.addAll(extra);
        _nvrtcProgram prog = new _nvrtcProgram();
        try (BytePointer src = new BytePointer(source, StandardCharsets.UTF_8);
             BytePointer srcName = new BytePointer(name, StandardCharsets.UTF_8)) {
            checkNvrtc(nvrtc.nvrtcCreateProgram(prog, src, srcName, 0, (PointerPointer<?>) null, (PointerPointer<?>) null),
                    "nvrtcCreateProgram(" + name + ")");
        }
        // The varargs PointerPointer(BytePointer...) constructor crashed the JVM on the GPU host:
        // allocate the array, put each option, and keep every BytePointer referenced until the compile returns.
        BytePointer[] optionBytes = new BytePointer[all.size()];
        PointerPointer<BytePointer> optionArray = new PointerPointer<>(all.size());
        try {
            for (int i = 0; i < optionBytes.length; i++) {
                optionBytes[i] = new BytePointer(all.get(i), StandardCharsets.UTF_8);
                optionArray.put(i, optionBytes[i]);
            }
            int rc = nvrtc.nvrtcCompileProgram(prog, optionBytes.length, optionArray);
            String log = programLog(prog);
            if (rc != nvrtc.NVRTC_SUCCESS) {
                throw new CompileException("NVRTC failed to compile " + name + " for " + target.arch() + " with "
                        + all + ": " + nvrtcError(rc), log);
            }
            if (!log.isBlank()) {
                LOG.debug("NVRTC log for {}:\n{}", name, log);
            }
            return target.cubin() ? cubin(prog) : ptx(prog);
        } finally {
            for (BytePointer b : optionBytes) {
                if (b != null) {
                    b.close();
                }
            }
            optionArray.close();
            nvrtc.nvrtcDestroyProgram(prog);
        }
    }

    private static byte[] cubin(_nvrtcProgram prog) {
        try (SizeTPointer size = new SizeTPointer(1)) {
            checkNvrtc(nvrtc.nvrtcGetCUBINSize(prog, size), "nvrtcGetCUBINSize");
            byte[] out = new byte[Math.toIntExact(size.get())];
            checkNvrtc(nvrtc.nvrtcGetCUBIN(prog, out), "nvrtcGetCUBIN");
            return out;
        }
    }

    /** PTX including its terminating NUL, which cuModuleLoadData needs. */
    private static byte[] ptx(_nvrtcProgram prog) {
        try (SizeTPointer size = new SizeTPointer(1)) {
            checkNvrtc(nvrtc.nvrtcGetPTXSize(prog, size), "nvrtcGetPTXSize");
            byte[] out = new byte[Math.toIntExact(size.get())];
            checkNvrtc(nvrtc.nvrtcGetPTX(prog, out), "nvrtcGetPTX");
            return out;
        }
    }

    private static String programLog(_nvrtcProgram prog) {
        try (SizeTPointer size = new SizeTPointer(1)) {
            if (nvrtc.nvrtcGetProgramLogSize(prog, size) != nvrtc.NVRTC_SUCCESS || size.get() <= 1) {
                return "";
            }
            byte[] log = new byte[Math.toIntExact(size.get())];
            if (nvrtc.nvrtcGetProgramLog(prog, log) != nvrtc.NVRTC_SUCCESS) {
                return "";
            }
            return new String(log, 0, log.length - 1, StandardCharsets.UTF_8).strip();
        }
    }

    private static String readResource(String resource) {
        try (InputStream in = KernelCompiler.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("kernel source not on the classpath: " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read kernel source " + resource, e);
        }
    }

    private static int currentDevice() {
        int[] d = new int[1];
        check(cudart.cudaGetDevice(d), "cudaGetDevice");
        return d[0];
    }

    private static String nvrtcError(int rc) {
        BytePointer s = nvrtc.nvrtcGetErrorString(rc);
        return (s == null ? "NVRTC error" : s.getString()) + " (" + rc + ")";
    }

    private static void checkNvrtc(int rc, String what) {
        if (rc != nvrtc.NVRTC_SUCCESS) {
            throw new CompileException(what + ": " + nvrtcError(rc), "");
        }
    }

    private static void check(int rc, String what) {
        if (rc != cudart.cudaSuccess) {
            throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, what + ": " + CudaLibraries.cudaError(rc));
        }
    }
}
