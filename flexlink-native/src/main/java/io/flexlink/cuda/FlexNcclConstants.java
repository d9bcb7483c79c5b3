package io.flexlink.cuda;

/**
 * {@link FlexNccl}'s constants of NCCL's version, results, reduction operations, scalar residences, data types and flags,
 * with bytedeco's values (the NCCL headers the presets were built from). {@code FlexNccl} extends this class, so
 * that {@code FlexNccl.ncclFloat}, {@code import static io.flexlink.cuda.FlexNccl.*} (which imports inherited static
 * members too, JLS 7.5.4) and a single static import of one constant find them where bytedeco's are: migrating
 * stays one import. Declared apart to keep {@code FlexNccl} one file of functions within its size.
 */
public abstract class FlexNcclConstants {
    public static final int NCCL_MAJOR = 2, NCCL_MINOR = 30, NCCL_PATCH = 7;
    public static final String NCCL_SUFFIX = "";
    public static final int NCCL_VERSION_CODE = 23007; // the headers'; ncclGetVersion reports the library loaded
    public static final int NCCL_UNIQUE_ID_BYTES = 128;

    public static final int ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2, ncclInternalError = 3,
            ncclInvalidArgument = 4, ncclInvalidUsage = 5, ncclRemoteError = 6, ncclInProgress = 7, ncclTimeout = 8,
            ncclNumResults = 9;

    public static final int ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4, ncclNumOps = 5;
    public static final int ncclScalarDevice = 0, ncclScalarHostImmediate = 1;

    public static final int ncclInt8 = 0;
    public static final int ncclChar = 0;
    public static final int ncclUint8 = 1;
    public static final int ncclInt32 = 2;
    public static final int ncclInt = 2;
    public static final int ncclUint32 = 3;
    public static final int ncclInt64 = 4;
    public static final int ncclUint64 = 5;
    public static final int ncclFloat16 = 6;
    public static final int ncclHalf = 6;
    public static final int ncclFloat32 = 7;
    public static final int ncclFloat = 7;
    public static final int ncclFloat64 = 8;
    public static final int ncclDouble = 8;
    public static final int ncclBfloat16 = 9;
    public static final int ncclFloat8e4m3 = 10;
    public static final int ncclFloat8e5m2 = 11;
    public static final int ncclNumTypes = 12;

    /** ncclCommSplit's color of a rank that joins no child; ncclCommShrink's and ncclCommRevoke's flags. */
    public static final int NCCL_SPLIT_NOCOLOR = -1;
    public static final int NCCL_SHRINK_DEFAULT = 0, NCCL_SHRINK_ABORT = 1;
    public static final int NCCL_REVOKE_DEFAULT = 0;

    /** ncclCommWindowRegister's flags, and the alignment NCCL's windows need. */
    public static final int NCCL_WIN_DEFAULT = 0, NCCL_WIN_COLL_SYMMETRIC = 1, NCCL_WIN_STRICT_ORDERING = 2,
            NCCL_WIN_REQUIRED_ALIGNMENT = 4096;

    /** ncclCommSuspend's flag, and ncclCommMemStats' statistics (ncclCommMemStat_t). */
    public static final int NCCL_SUSPEND_MEM = 1;
    public static final int ncclStatGpuMemSuspend = 0, ncclStatGpuMemSuspended = 1, ncclStatGpuMemPersist = 2,
            ncclStatGpuMemTotal = 3;

    FlexNcclConstants() {
    }
}
