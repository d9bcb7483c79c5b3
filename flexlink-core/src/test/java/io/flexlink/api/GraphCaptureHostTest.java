package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import org.junit.jupiter.api.Test;

/** The host backend has no CUDA graphs: a capture request is a clear INVALID_USAGE, and nothing changes. */
class GraphCaptureHostTest {
    @Test
    void aCaptureOnTheHostBackendIsInvalidUsage() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().build())) {
            RuntimeStream s = backend.createStream(0, "user");
            FlexLinkException e = assertThrows(FlexLinkException.class, s::beginCapture);
            assertEquals(Result.INVALID_USAGE, e.result());
            assertTrue(e.getMessage().contains("no CUDA graphs"), e.getMessage());
            assertEquals(Result.INVALID_USAGE, assertThrows(FlexLinkException.class, s::endCapture).result());
            assertTrue(!s.isCapturing());
            s.close();
        }
    }
}
