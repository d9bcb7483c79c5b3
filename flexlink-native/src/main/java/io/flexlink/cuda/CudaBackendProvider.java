package io.flexlink.cuda;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.BackendProvider;

/** Offers {@link CudaBackend} to {@code flexlink.backend=auto|cuda} discovery (ServiceLoader). */
public final class CudaBackendProvider implements BackendProvider {
    @Override
    public String name() {
        return "cuda";
    }

    /** Null when CUDA (a device), NVRTC and NCCL all load; else why not. Never throws. */
    @Override
    public String unavailableReason() {
        return reason();
    }

    static String reason() {
        try {
            if (!CudaLibraries.available()) {
                return CudaLibraries.unavailableReason();
            }
            if (!CudaLibraries.nvrtcAvailable()) {
                return CudaLibraries.nvrtcUnavailableReason();
            }
            if (!CudaLibraries.ncclAvailable()) {
                return CudaLibraries.ncclUnavailableReason();
            }
            return null;
        } catch (RuntimeException | LinkageError e) {
            return "probing CUDA failed: " + e;
        }
    }

    @Override
    public Backend open(FlexLinkConfig config) {
        return CudaBackend.open(config);
    }
}
