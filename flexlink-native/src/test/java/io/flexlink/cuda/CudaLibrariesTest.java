package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class CudaLibrariesTest {

    @Test
    void unavailableAlwaysComesWithAReason() {
        boolean ok = CudaLibraries.available();
        String reason = CudaLibraries.unavailableReason();
        if (ok) {
            assertEquals("", reason);
            assertTrue(CudaLibraries.deviceCount() > 0);
        } else {
            assertFalse(reason.isBlank(), "reason must be non-empty when unavailable");
            assertEquals(0, CudaLibraries.deviceCount());
        }
    }

    @Test
    void repeatedCallsAreFastAndConsistent() {
        boolean first = CudaLibraries.available();
        String firstReason = CudaLibraries.unavailableReason();
        long t0 = System.nanoTime();
        for (int i = 0; i < 1000; i++) {
            assertEquals(first, CudaLibraries.available());
            assertEquals(firstReason, CudaLibraries.unavailableReason());
        }
        long micros = (System.nanoTime() - t0) / 1000;
        assertTrue(micros < 200_000, "1000 memoized calls took " + micros + " us");
    }

    @Test
    void dependentLibrariesReportCudaFirst() {
        // Each of these inherits the cudart preset, so none can be available without CUDA.
        boolean[] libs = {CudaLibraries.ncclAvailable(), CudaLibraries.nvrtcAvailable(), CudaLibraries.nvmlAvailable()};
        String[] reasons = {CudaLibraries.ncclUnavailableReason(), CudaLibraries.nvrtcUnavailableReason(),
            CudaLibraries.nvmlUnavailableReason()};
        for (int i = 0; i < libs.length; i++) {
            if (!CudaLibraries.available()) {
                assertFalse(libs[i]);
                assertTrue(reasons[i].startsWith("CUDA unavailable: "), reasons[i]);
            }
            assertEquals(libs[i], reasons[i].isEmpty(), reasons[i]);
        }
        // a second round gives the same answers
        assertEquals(libs[0], CudaLibraries.ncclAvailable());
        assertEquals(libs[1], CudaLibraries.nvrtcAvailable());
        assertEquals(libs[2], CudaLibraries.nvmlAvailable());
    }

    @Test
    @Tag("gpu")
    void seesAtLeastOneDevice() {
        assumeTrue(CudaLibraries.available(), CudaLibraries::unavailableReason);
        assertTrue(CudaLibraries.deviceCount() > 0);
        int[] n = new int[1];
        assertEquals(cudart.cudaSuccess, cudart.cudaGetDeviceCount(n));
        assertEquals(n[0], CudaLibraries.deviceCount());
        assertTrue(CudaLibraries.cudaError(cudart.cudaErrorNoDevice).startsWith("cudaErrorNoDevice (100)"),
                CudaLibraries.cudaError(cudart.cudaErrorNoDevice));
        assertTrue(CudaLibraries.driverError(1).startsWith("CUDA_ERROR_INVALID_VALUE (1)"), CudaLibraries.driverError(1));
    }
}
