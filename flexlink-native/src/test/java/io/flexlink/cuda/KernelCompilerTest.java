package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.FlexLinkException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KernelCompilerTest {

    static final String AXPY = """
            extern "C" __global__ void axpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) y[i] = fmaf(a, x[i], y[i]);
            }
            """;

    @TempDir
    Path dir;

    @Test
    void choosesCubinForSupportedArchAndPtxOtherwise() {
        int[] supported = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};
        assertEquals(new KernelCompiler.Target("sm_90", true), KernelCompiler.chooseTarget(90, supported));
        assertEquals(new KernelCompiler.Target("sm_75", true), KernelCompiler.chooseTarget(75, supported));
        assertEquals(new KernelCompiler.Target("compute_121", false), KernelCompiler.chooseTarget(130, supported));
        assertEquals(new KernelCompiler.Target("compute_90", false), KernelCompiler.chooseTarget(95, supported));
        assertThrows(FlexLinkException.class, () -> KernelCompiler.chooseTarget(70, supported));
    }

    @Test
    void withoutCudaLoadingFailsCleanly() {
        assumeTrue(!CudaLibraries.nvrtcAvailable(), "NVRTC is available here");
        KernelCompiler kc = new KernelCompiler(dir);
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> kc.load("axpy.cu", AXPY, List.of()));
        assertTrue(e.getMessage().contains("NVRTC unavailable"), e.getMessage());
        assertEquals(0, kc.compilations());
    }

    @Test
    @Tag("gpu")
    void compilesLaunchesAndHitsTheCacheOnTheSecondLoad() throws Exception {
        assumeTrue(CudaLibraries.nvrtcAvailable(), CudaLibraries::nvrtcUnavailableReason);
        KernelCompiler first = new KernelCompiler(dir);
        try (CudaModule m = first.load("axpy.cu", AXPY, List.of("-std=c++17"))) {
            assertFalse(m.fromCache());
            assertEquals(1, first.compilations());
            CUfunc_st f = m.function("axpy");
            assertSame(f, m.function("axpy"));
            runAxpy(f, (1 << 20) + 3, 42);
            assertThrows(FlexLinkException.class, () -> m.function("no_such_kernel"));
        }
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count());
        }

        KernelCompiler second = new KernelCompiler(dir);
        CudaModule cached = second.load("axpy.cu", AXPY, List.of("-std=c++17"));
        assertTrue(cached.fromCache());
        assertEquals(0, second.compilations());
        assertEquals(1, second.cacheHits());
        runAxpy(cached.function("axpy"), 1000, 7);
        cached.close();
        cached.close(); // idempotent
        assertTrue(cached.isClosed());
        assertThrows(IllegalStateException.class, () -> cached.function("axpy"));

        // a corrupt cache file is rebuilt by a fresh compile
        try (var files = Files.list(dir)) {
            Files.write(files.findFirst().orElseThrow(), new byte[] {0, 1, 2});
        }
        try (CudaModule rebuilt = second.load("axpy.cu", AXPY, List.of("-std=c++17"))) {
            assertFalse(rebuilt.fromCache());
            assertEquals(1, second.compilations());
            runAxpy(rebuilt.function("axpy"), 333, 9);
        }
    }

    @Test
    @Tag("gpu")
    void compileErrorsCarryTheNvrtcLog() {
        assumeTrue(CudaLibraries.nvrtcAvailable(), CudaLibraries::nvrtcUnavailableReason);
        KernelCompiler kc = new KernelCompiler(dir);
        KernelCompiler.CompileException e = assertThrows(KernelCompiler.CompileException.class,
                () -> kc.load("broken.cu", "extern \"C\" __global__ void k() { undeclared_thing = 1; }", List.of()));
        assertTrue(e.log().contains("undeclared_thing"), e.log());
        assertTrue(e.getMessage().contains("broken.cu"), e.getMessage());
        assertEquals(0, kc.compilations());
    }

    /** y = fma(a, x, y) on the GPU, compared bit for bit with Math.fma. */
    private static void runAxpy(CUfunc_st f, int n, long seed) {
        Random r = new Random(seed);
        float a = 2.5f;
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextFloat() * 2 - 1;
            y[i] = r.nextFloat() * 2 - 1;
        }
        long bytes = 4L * n;
        Pointer dx = new Pointer();
        Pointer dy = new Pointer();
        check(cudart.cudaMalloc(dx, bytes));
        check(cudart.cudaMalloc(dy, bytes));
        try (FloatPointer hx = new FloatPointer(x); FloatPointer hy = new FloatPointer(y);
             FloatPointer pa = new FloatPointer(1).put(a); LongPointer px = new LongPointer(1).put(dx.address());
             LongPointer py = new LongPointer(1).put(dy.address()); IntPointer pn = new IntPointer(1).put(n);
             PointerPointer<Pointer> params = new PointerPointer<>(4)) {
            check(cudart.cudaMemcpy(dx, hx, bytes, cudart.cudaMemcpyHostToDevice));
            check(cudart.cudaMemcpy(dy, hy, bytes, cudart.cudaMemcpyHostToDevice));
            params.put(0, pa).put(1, px).put(2, py).put(3, pn);
            int block = 256;
            int grid = (n + block - 1) / block;
            int rc = cudart.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, (CUstream_st) null, params, (PointerPointer<?>) null);
            assertEquals(cudart.CUDA_SUCCESS, rc, () -> CudaLibraries.driverError(rc));
            check(cudart.cudaDeviceSynchronize());
            check(cudart.cudaMemcpy(hy, dy, bytes, cudart.cudaMemcpyDeviceToHost));
            float[] out = new float[n];
            hy.get(out);
            for (int i = 0; i < n; i++) {
                float expect = Math.fma(a, x[i], y[i]);
                if (Float.floatToIntBits(out[i]) != Float.floatToIntBits(expect)) {
                    throw new AssertionError("y[" + i + "] = " + out[i] + ", expected " + expect);
                }
            }
        } finally {
            cudart.cudaFree(dx);
            cudart.cudaFree(dy);
        }
    }

    private static void check(int rc) {
        assertEquals(cudart.cudaSuccess, rc, () -> CudaLibraries.cudaError(rc));
    }
}
