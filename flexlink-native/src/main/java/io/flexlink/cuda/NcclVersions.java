package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import org.bytedeco.cuda.global.nccl;

/**
 * The version of the NCCL library loaded, against the functions that need a later one. bytedeco's presets were built
 * from the NCCL 2.30 headers, but the library loaded may be older (the lent H200 has 2.28.3): bytedeco's JNI binds
 * each function at its first call, and a function the library lacks ends the process (a symbol lookup error). So a
 * call that hands NCCL a newer function first asks {@link #need}: an older library is INVALID_USAGE naming the
 * version the function needs and the one loaded.
 */
final class NcclVersions {
    /** ncclCommWindowRegister, ncclCommWindowDeregister. */
    static final int WINDOWS = 22700;
    /** ncclWinGetUserPtr, ncclPutSignal, ncclSignal, ncclWaitSignal. */
    static final int SIGNALS = 22900;
    /** ncclCommMemStats, ncclCommSuspend, ncclCommResume and the ncclParam* functions. */
    static final int V2_30 = 23000;
    private static volatile int loaded;

    private NcclVersions() {
    }

    /** The loaded library's version code (ncclGetVersion), asked once; the caller knows NCCL is there. */
    static int loaded() {
        int v = loaded;
        if (v == 0) {
            int[] out = new int[1];
            NcclErrors.check(nccl.ncclGetVersion(out), "ncclGetVersion", null);
            loaded = v = out[0];
        }
        return v;
    }

    /** INVALID_USAGE naming both versions unless the loaded NCCL is {@code version} or later. */
    static void need(int version, String function) {
        int v = loaded();
        if (v < version) {
            throw new FlexLinkException(Result.INVALID_USAGE, function + " needs NCCL " + NcclTransport.version(version)
                    + " or later; the NCCL loaded is " + NcclTransport.version(v) + ", which has no such function");
        }
    }
}
