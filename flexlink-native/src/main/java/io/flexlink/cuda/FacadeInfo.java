package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.NCCL_UNIQUE_ID_BYTES;
import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import java.nio.IntBuffer;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;

/** The facade's answers about the library rather than a communicator: version, ids, error texts, debug. */
final class FacadeInfo {
    private static final int RESULTS = Result.values().length;
    private static final BytePointer[] ERROR_STRINGS = new BytePointer[RESULTS + 1];

    private FacadeInfo() {
    }

    /** The NCCL library's version into an {@code int[]}, {@link IntBuffer} or {@link IntPointer}. */
    static int version(Object out) {
        if (!FacadeCalls.writable(out)) {
            return Result.INVALID_ARGUMENT.code();
        }
        int[] v = out instanceof int[] ? (int[]) out : new int[1];
        int rc;
        try {
            if (!CudaLibraries.ncclAvailable()) {
                NcclFacade.LOG.debug("COLL ncclGetVersion: {}", CudaLibraries.ncclUnavailableReason());
                return Result.SYSTEM_ERROR.code();
            }
            rc = nccl.ncclGetVersion(v);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclGetVersion", e);
        }
        if (rc == Result.SUCCESS.code() && out instanceof IntBuffer b) {
            b.put(b.position(), v[0]);
        } else if (rc == Result.SUCCESS.code() && out instanceof IntPointer p) {
            p.put(0, v[0]);
        }
        return rc;
    }

    /** A fresh id any process of this machine may join ({@link FlexLink#getUniqueIdForProcesses}). */
    static int uniqueId(ncclUniqueId uniqueId) {
        if (uniqueId == null || uniqueId.address() == 0) {
            return Result.INVALID_ARGUMENT.code();
        }
        try {
            byte[] b = FlexLink.getUniqueIdForProcesses(FlexLinkConfig.fromEnvironment()).toBytes();
            UNSAFE.copyMemory(b, UNSAFE.arrayBaseOffset(byte[].class), null, FacadeInfo.idAddress(uniqueId),
                    NCCL_UNIQUE_ID_BYTES);
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclGetUniqueId", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclGetUniqueId", e);
        }
    }

    /** Where a bytedeco {@link ncclUniqueId}'s 128 bytes are (its position counts whole ids). */
    static long idAddress(ncclUniqueId id) {
        return id.address() + id.position() * NCCL_UNIQUE_ID_BYTES;
    }

    /** FlexLink's text for each result code (a cached native string, like NCCL's static ones). */
    static BytePointer errorString(int result) {
        int i = result >= 0 && result < RESULTS ? result : RESULTS;
        BytePointer s = ERROR_STRINGS[i];
        if (s == null) {
            synchronized (ERROR_STRINGS) {
                s = ERROR_STRINGS[i];
                if (s == null) {
                    s = new BytePointer(i < RESULTS ? Result.fromCode(i).description() : "unknown result code");
                    ERROR_STRINGS[i] = s;
                }
            }
        }
        return s;
    }

    /**
     * {@code ncclGetLastError}: the creation error of {@code comm} when its grouped or non-blocking creation
     * failed, else what the process's last failed facade call said, on whatever thread (NCCL's text is one global
     * string too); "" when none.
     * A fresh native string per call: errors are not the hot path.
     */
    static BytePointer lastError(ncclComm comm) {
        String s = FacadePending.message(comm);
        return new BytePointer(s != null ? s : NcclFacade.lastError());
    }

    static void resetDebugInit() {
        try {
            if (CudaLibraries.ncclAvailable()) {
                nccl.ncclResetDebugInit();
            }
        } catch (RuntimeException | LinkageError e) {
            NcclFacade.internal("ncclResetDebugInit", e);
        }
    }
}
