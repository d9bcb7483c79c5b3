package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.lang.reflect.Array;
import java.nio.Buffer;
import java.util.function.IntSupplier;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * {@link FlexNccl}'s ncclParam* functions: NCCL 2.30's registry of NCCL's own parameters (its NCCL_* settings),
 * which are the NCCL library's, not FlexLink's (FlexLink's settings are FlexLinkConfig's). So each call is NCCL's
 * own, handed to the library through bytedeco, after the checks NCCL makes of its arguments (a NULL handle, key or
 * output is ncclInvalidArgument naming it, decided here, so that it holds where NCCL is missing too); where NCCL
 * is missing the call is ncclSystemError saying why, and where the NCCL loaded is older than 2.30 (which has no
 * such function) ncclInvalidUsage naming both versions ({@link NcclVersions}). An output that bytedeco writes a
 * pointer into ({@code @ByPtrPtr}) only has to be an object; a plain output must be somewhere to write.
 */
final class FacadeParams {
    private FacadeParams() {
    }

    /** Not null: an object bytedeco can write a pointer into ({@code @ByPtrPtr} outputs). */
    static boolean present(Object out) {
        return out != null;
    }

    /** Somewhere to write one value: a non-NULL pointer, a writable buffer with room, a non-empty array. */
    static boolean writable(Object out) {
        if (out == null) {
            return false;
        }
        if (out instanceof Pointer p) {
            return p.address() != 0;
        }
        if (out instanceof Buffer b) {
            return b.hasRemaining() && !b.isReadOnly();
        }
        return Array.getLength(out) >= 1;
    }

    /** A handle or key that names something: not null, not a NULL pointer, not an empty key string. */
    private static boolean given(Object in) {
        return in != null && !(in instanceof Pointer p && p.address() == 0);
    }

    /** {@code ncclParamBind(out, key)}: a handle of the parameter named {@code key}. */
    static int bind(Object out, boolean byPtrPtr, Object key, IntSupplier call) {
        return !(byPtrPtr ? present(out) : writable(out)) ? invalid("ncclParamBind", "out: NULL")
                : !given(key) ? invalid("ncclParamBind", "key: NULL") : forward("ncclParamBind", call);
    }

    /** {@code ncclParamGet*(h, out)}: the parameter's value as the function's type. */
    static int get(String function, Pointer h, Object out, boolean byPtrPtr, IntSupplier call) {
        return !given(h) ? invalid(function, "h: NULL")
                : !(byPtrPtr ? present(out) : writable(out)) ? invalid(function, "out: NULL") : forward(function, call);
    }

    /** {@code ncclParamGet(h, out, maxLen, len)}: the value's bytes, at most {@code maxLen}, their count in len. */
    static int getBytes(Pointer h, Object len, IntSupplier call) {
        return !given(h) ? invalid("ncclParamGet", "h: NULL")
                : !writable(len) ? invalid("ncclParamGet", "len: NULL") : forward("ncclParamGet", call);
    }

    /** {@code ncclParamGetParameter(key, value, valueLen)}: the text of the parameter named {@code key}. */
    static int getParameter(Object key, Object value, Object valueLen, IntSupplier call) {
        String f = "ncclParamGetParameter";
        boolean valueOk = value instanceof PointerPointer<?> ? writable(value) : present(value); // else @ByPtrPtr
        return !given(key) ? invalid(f, "key: NULL") : !valueOk ? invalid(f, "value: NULL")
                : !writable(valueLen) ? invalid(f, "valueLen: NULL") : forward(f, call);
    }

    /** {@code ncclParamGetAllParameterKeys(table, tableLen)}: the keys NCCL publishes. */
    static int allKeys(Pointer table, Object tableLen, IntSupplier call) {
        String f = "ncclParamGetAllParameterKeys";
        return !given(table) ? invalid(f, "table: NULL") : !writable(tableLen) ? invalid(f, "tableLen: NULL")
                : forward(f, call);
    }

    /** {@code ncclParamDumpAll()}: NCCL prints its parameters; where it cannot, ncclGetLastError says why. */
    static void dumpAll() {
        forward("ncclParamDumpAll", () -> {
            nccl.ncclParamDumpAll();
            return Result.SUCCESS.code();
        });
    }

    private static int invalid(String function, String why) {
        return NcclFacade.failed(function, new FlexLinkException(Result.INVALID_ARGUMENT, why));
    }

    /** NCCL's answer once it is there and 2.30 or later; otherwise the code saying why not. */
    private static int forward(String function, IntSupplier call) {
        try {
            if (!CudaLibraries.ncclAvailable()) {
                return NcclFacade.failed(function, new FlexLinkException(Result.SYSTEM_ERROR, "NCCL's parameters are "
                        + "the NCCL library's, and it is missing: " + CudaLibraries.ncclUnavailableReason()));
            }
            NcclVersions.need(NcclVersions.V2_30, function);
            return call.getAsInt();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(function, e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(function, e);
        }
    }
}
