package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;

/** Turns CUDA error codes into {@link FlexLinkException}s (UNHANDLED_CUDA_ERROR, with the CUDA error name). */
final class CudaCheck {
    private CudaCheck() {
    }

    /** Checks a CUDA runtime result. */
    static void rt(int rc, String what) {
        if (rc != 0) {
            throw rtError(rc, what);
        }
    }

    /** Checks a CUDA driver result. */
    static void drv(int rc, String what) {
        if (rc != 0) {
            throw drvError(rc, what);
        }
    }

    static FlexLinkException rtError(int rc, String what) {
        return new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, what + ": " + CudaLibraries.cudaError(rc));
    }

    static FlexLinkException drvError(int rc, String what) {
        return new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, what + ": " + CudaLibraries.driverError(rc));
    }
}
