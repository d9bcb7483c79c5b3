package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.backend.Backends;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.host.HostBackend;
import org.junit.jupiter.api.Test;

/** Discovery and fallback; the unavailable cases run where there is no GPU (CI). */
class CudaBackendProviderTest {

    @Test
    void isDiscoveredAsCuda() {
        assertInstanceOf(CudaBackendProvider.class, Backends.provider("cuda"));
        assertEquals("cuda", new CudaBackendProvider().name());
    }

    @Test
    void reportsWhyItIsUnavailable() {
        assumeFalse(CudaBackendProvider.reason() == null, "CUDA is available here");
        String reason = new CudaBackendProvider().unavailableReason();
        assertNotNull(reason);
        assertFalse(reason.isBlank());
    }

    @Test
    void autoFallsBackToTheHostBackend() {
        assumeFalse(CudaBackendProvider.reason() == null, "CUDA is available here");
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "auto").build();
        try (Backend b = Backends.open(config)) {
            assertInstanceOf(HostBackend.class, b);
        }
    }

    @Test
    void askingForCudaFailsWithSystemError() {
        assumeFalse(CudaBackendProvider.reason() == null, "CUDA is available here");
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda").build();
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> Backends.open(config));
        assertEquals(Result.SYSTEM_ERROR, e.result());
        assertTrue(e.getMessage().contains("cuda"), e.getMessage());
        FlexLinkException direct = assertThrows(FlexLinkException.class, () -> CudaBackend.open(config));
        assertEquals(Result.SYSTEM_ERROR, direct.result());
    }

    @Test
    void ncclVersionCodesAreDecoded() {
        assertEquals("2.28.3", NcclTransport.version(22803));
        assertEquals("2.29.3", NcclTransport.version(22903));
        assertEquals("2.8.4", NcclTransport.version(2804));
    }
}
