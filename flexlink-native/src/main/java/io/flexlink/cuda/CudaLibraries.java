package io.flexlink.cuda;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.global.nvml;
import org.bytedeco.cuda.global.nvrtc;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.PointerPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Safe, memoized loading of the CUDA libraries behind the org.bytedeco presets.
 *
 * <p>The presets' linux-x86_64 jar holds only the JNI wrappers ({@code libjnicudart.so} ...), which
 * link the system's {@code libcudart.so.13}, {@code libcuda.so.1}, {@code libnccl.so.2},
 * {@code libnvrtc.so.13} and {@code libnvidia-ml.so.1}. Where one is missing, {@link Loader#load}
 * fails within about 100 ms with an {@link UnsatisfiedLinkError}; nothing is downloaded, and the
 * multi-GB {@code cuda-platform-redist} jars are not on our classpath, so nothing large is extracted
 * (only the small JNI wrapper, into {@code ~/.javacpp/cache}). A failed class initialization cannot be
 * retried in the same JVM (later use gives {@link NoClassDefFoundError}), so every probe runs once
 * and its outcome, with the first, most informative reason, is kept.
 *
 * <p>The NCCL, NVRTC and NVML presets inherit the cudart preset, so each of them is available only
 * where {@link #available()} is true. Callers must check these methods before touching any class of
 * {@code org.bytedeco.cuda}: doing so where a probe failed throws {@link NoClassDefFoundError}.
 */
public final class CudaLibraries {
    private static final Logger LOG = LoggerFactory.getLogger(CudaLibraries.class);

    /**
     * First CUDA call on a large node (driver load, GPU init without persistence mode) can take
     * seconds; a wedged driver can take forever. Past this, CUDA counts as unavailable rather than
     * hanging the caller.
     */
    private static final long PROBE_TIMEOUT_MS = 120_000;

    /** Outcome of one probe; reason is empty when ok. */
    private record Status(boolean ok, String reason) {
        static final Status OK = new Status(true, "");

        static Status fail(String reason) {
            return new Status(false, reason == null || reason.isBlank() ? "unknown failure" : reason);
        }
    }

    private static volatile Status cudartStatus;
    private static volatile Status ncclStatus;
    private static volatile Status nvrtcStatus;
    private static volatile Status nvmlStatus;
    private static volatile int deviceCount;

    private CudaLibraries() {
    }

    /** True when the CUDA runtime and driver load and at least one CUDA device is visible. */
    public static boolean available() {
        return cudart().ok();
    }

    /** Why {@link #available()} is false; the empty string when it is true. */
    public static String unavailableReason() {
        return cudart().reason();
    }

    /** Visible CUDA devices; 0 where CUDA is unavailable. */
    public static int deviceCount() {
        return available() ? deviceCount : 0;
    }

    /** True when CUDA is available and {@code libnccl.so.2} loads. */
    public static boolean ncclAvailable() {
        return nccl().ok();
    }

    public static String ncclUnavailableReason() {
        return nccl().reason();
    }

    /** True when CUDA is available and NVRTC ({@code libnvrtc.so.13}) loads. */
    public static boolean nvrtcAvailable() {
        return nvrtc().ok();
    }

    public static String nvrtcUnavailableReason() {
        return nvrtc().reason();
    }

    /** True when CUDA is available and NVML ({@code libnvidia-ml.so.1}) loads. */
    public static boolean nvmlAvailable() {
        return nvml().ok();
    }

    public static String nvmlUnavailableReason() {
        return nvml().reason();
    }

    // ---- probes, each run once ----

    private static Status cudart() {
        Status s = cudartStatus;
        if (s == null) {
            synchronized (CudaLibraries.class) {
                s = cudartStatus;
                if (s == null) {
                    s = runProbe("cudart", CudaLibraries::probeCudart);
                    cudartStatus = s;
                    if (s.ok()) {
                        LOG.debug("CUDA available: {} device(s)", deviceCount);
                    } else {
                        LOG.info("CUDA unavailable: {}", s.reason());
                    }
                }
            }
        }
        return s;
    }

    private static Status nccl() {
        Status s = ncclStatus;
        if (s == null) {
            synchronized (CudaLibraries.class) {
                s = ncclStatus;
                if (s == null) {
                    s = dependent("NCCL", () -> load(nccl.class, "NCCL (libnccl.so.2)"));
                    if (s.ok()) {
                        int[] v = new int[1];
                        int rc = nccl.ncclGetVersion(v);
                        LOG.debug("NCCL loaded, version code {}", rc == nccl.ncclSuccess ? v[0] : -1);
                    }
                    ncclStatus = s;
                }
            }
        }
        return s;
    }

    private static Status nvrtc() {
        Status s = nvrtcStatus;
        if (s == null) {
            synchronized (CudaLibraries.class) {
                s = nvrtcStatus;
                if (s == null) {
                    s = dependent("NVRTC", () -> load(nvrtc.class, "NVRTC (libnvrtc.so.13)"));
                    nvrtcStatus = s;
                }
            }
        }
        return s;
    }

    private static Status nvml() {
        Status s = nvmlStatus;
        if (s == null) {
            synchronized (CudaLibraries.class) {
                s = nvmlStatus;
                if (s == null) {
                    s = dependent("NVML", () -> load(nvml.class, "NVML (libnvidia-ml.so.1)"));
                    nvmlStatus = s;
                }
            }
        }
        return s;
    }

    /** Probes a library whose preset inherits cudart: unavailable with cudart's reason if CUDA is. */
    private static Status dependent(String what, Callable<Status> probe) {
        Status base = cudart();
        if (!base.ok()) {
            return Status.fail("CUDA unavailable: " + base.reason());
        }
        Status s = runProbe(what, probe);
        if (!s.ok()) {
            LOG.info("{} unavailable: {}", what, s.reason());
        }
        return s;
    }

    private static Status probeCudart() {
        Status loaded = load(cudart.class, "the CUDA runtime (libcudart.so.13, libcuda.so.1)");
        if (!loaded.ok()) {
            return loaded;
        }
        int[] n = new int[1];
        int rc = cudart.cudaGetDeviceCount(n);
        if (rc != cudart.cudaSuccess) {
            return Status.fail("cudaGetDeviceCount failed: " + cudaError(rc));
        }
        if (n[0] <= 0) {
            return Status.fail("no CUDA device is visible (cudaGetDeviceCount returned 0)");
        }
        deviceCount = n[0];
        int[] driver = new int[1];
        int[] runtime = new int[1];
        cudart.cudaDriverGetVersion(driver);
        cudart.cudaRuntimeGetVersion(runtime);
        LOG.info("INIT CUDA: {} device(s), driver {}, runtime {}", n[0], version(driver[0]), version(runtime[0]));
        return Status.OK;
    }

    private static Status load(Class<?> preset, String what) {
        try {
            String lib = Loader.load(preset);
            LOG.debug("loaded {} via {}", what, lib);
            return Status.OK;
        } catch (LinkageError | RuntimeException e) {
            // UnsatisfiedLinkError, NoClassDefFoundError and ExceptionInInitializerError are LinkageErrors.
            return Status.fail("cannot load " + what + ": " + rootMessage(e));
        }
    }

    /** Runs a probe on a daemon thread so that a wedged driver cannot hang the caller forever. */
    private static Status runProbe(String what, Callable<Status> probe) {
        FutureTask<Status> task = new FutureTask<>(probe);
        Thread t = new Thread(task, "flexlink-cuda-probe-" + what);
        t.setDaemon(true);
        t.start();
        try {
            return task.get(PROBE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return Status.fail(what + " probe did not finish within " + PROBE_TIMEOUT_MS + " ms (driver hung?)");
        } catch (ExecutionException e) {
            return Status.fail(what + " probe failed: " + rootMessage(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Status.fail(what + " probe interrupted");
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String top = e.getClass().getSimpleName() + ": " + e.getMessage();
        if (root == e) {
            return top;
        }
        // The root cause names the missing .so; the top names what JavaCPP looked for.
        return root.getClass().getSimpleName() + ": " + root.getMessage() + " (" + top + ")";
    }

    private static String version(int v) {
        return v <= 0 ? "?" : (v / 1000) + "." + (v % 1000) / 10;
    }

    // ---- error text, for this package's exceptions ----

    /** {@code cudaErrorName (code): description} for a CUDA runtime error code. */
    public static String cudaError(int rc) {
        try {
            BytePointer name = cudart.cudaGetErrorName(rc);
            BytePointer text = cudart.cudaGetErrorString(rc);
            return (name == null ? "cudaError" : name.getString()) + " (" + rc + "): "
                    + (text == null ? "" : text.getString());
        } catch (LinkageError e) {
            return "cudaError " + rc;
        }
    }

    /** {@code CUDA_ERROR_NAME (code): description} for a CUDA driver error code. */
    public static String driverError(int rc) {
        try (PointerPointer<BytePointer> name = new PointerPointer<>(1);
             PointerPointer<BytePointer> text = new PointerPointer<>(1)) {
            String n = cudart.cuGetErrorName(rc, name) == cudart.CUDA_SUCCESS && name.get(0) != null
                    ? name.get(BytePointer.class, 0).getString() : "CUresult";
            String t = cudart.cuGetErrorString(rc, text) == cudart.CUDA_SUCCESS && text.get(0) != null
                    ? text.get(BytePointer.class, 0).getString() : "";
            return n + " (" + rc + "): " + t;
        } catch (LinkageError e) {
            return "CUresult " + rc;
        }
    }
}
