package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import org.bytedeco.javacpp.Pointer;

/**
 * {@code ncclGroupSimulateEnd} behind {@link FlexNccl}, as NCCL's: a NULL {@code simInfo} is a plain
 * ncclGroupEnd; outside a group ncclInvalidUsage; an inner end only closes its level (simInfo untouched); the
 * outermost checks the struct's magic (NCCL_SIM_INFO_INITIALIZER's, else ncclInvalidArgument), launches nothing,
 * forgets the group's calls and writes their estimated time (microseconds, as NCCL's estimatedTime) from
 * {@link io.flexlink.FlexLink#groupSimulateEnd()}. Creations and splits recorded in the group still run, as NCCL
 * still runs a simulated group's; with a bad magic too (where NCCL would cancel them), the calls being dropped.
 * The struct is read from its address (ncclSimInfo_t's layout: size_t size, magic, version, float estimatedTime),
 * only as far as its size says, so that it works where bytedeco's JNI classes cannot load.
 */
final class FacadeSimulate {
    /** NCCL_SIM_INFO_INITIALIZER's magic. */
    static final int MAGIC = 0x74685283;
    /** sizeof(ncclSimInfo_t). */
    static final int BYTES = 24;
    static final int MAGIC_AT = 8;
    static final int ESTIMATED_TIME_AT = 16;

    private FacadeSimulate() {
    }

    static int simulateEnd(Pointer simInfo) {
        if (simInfo == null || simInfo.address() == 0) {
            return NcclFacade.groupEndCode();
        }
        if (NcclFacade.groupDepth() == 0) {
            return NcclFacade.failed("ncclGroupSimulateEnd", new FlexLinkException(Result.INVALID_USAGE,
                    "not in a group call (ncclGroupStart)"));
        }
        long at = simInfo.address() + simInfo.position() * BYTES;
        long size = Math.min(UNSAFE.getLong(at), BYTES);
        boolean outermost = NcclFacade.groupDepth() == 1;
        int bad = Result.SUCCESS.code();
        if (outermost && (size < MAGIC_AT + 4 || UNSAFE.getInt(at + MAGIC_AT) != MAGIC)) {
            bad = NcclFacade.failed("ncclGroupSimulateEnd", new FlexLinkException(Result.INVALID_ARGUMENT,
                    "simInfo.magic: not NCCL_SIM_INFO_INITIALIZER's 0x74685283 (initialize the struct with it)"));
        }
        double[] seconds = {Double.NaN};
        int rc;
        try {
            rc = NcclFacade.groupEnd(seconds); // launches nothing; the group's calls are forgotten
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclGroupSimulateEnd", e);
        }
        if (bad != Result.SUCCESS.code()) {
            return bad;
        }
        if (rc == Result.SUCCESS.code() && outermost && size >= ESTIMATED_TIME_AT + 4) {
            UNSAFE.putFloat(at + ESTIMATED_TIME_AT, (float) (seconds[0] * 1e6));
        }
        return rc;
    }
}
