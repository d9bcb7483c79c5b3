package io.flexlink.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flexlink.config.FlexLinkConfig;

/** Shared setup of the GPU tests: they skip (never fail) where CUDA, NVRTC or NCCL is missing. */
final class GpuTests {
    private GpuTests() {
    }

    static void assumeCuda() {
        String reason = CudaBackendProvider.reason();
        assumeTrue(reason == null, () -> "no CUDA backend here: " + reason);
    }

    static CudaBackend open() {
        assumeCuda();
        return CudaBackend.open(FlexLinkConfig.fromEnvironment());
    }
}
