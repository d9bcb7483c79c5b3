package io.flexlink.cuda;

import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclParamHandle;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.ShortPointer;

/**
 * {@link FlexNccl}'s mirrors of NCCL 2.30's parameter functions ({@code ncclParam*}), with bytedeco's overloads:
 * NCCL's registry of its own NCCL_* parameters, so each call is handed to the NCCL library after NCCL's argument
 * checks, and needs NCCL 2.30 ({@link FacadeParams} says what answers otherwise). {@code FlexNccl} extends this
 * class, as it extends {@link FlexNcclConstants} through it: {@code FlexNccl.ncclParamBind} and the static import
 * of {@code FlexNccl.*} find these where bytedeco's are. Declared apart to keep {@code FlexNccl} within its size.
 */
@SuppressWarnings("rawtypes")
public abstract class FlexNcclParams extends FlexNcclConstants {
    FlexNcclParams() {
    }

    /** A handle of NCCL's parameter {@code key} into {@code out}. */
    public static int ncclParamBind(ncclParamHandle out, BytePointer key) {
        return FacadeParams.bind(out, true, key, () -> nccl.ncclParamBind(out, key));
    }
    public static int ncclParamBind(PointerPointer out, String key) {
        return FacadeParams.bind(out, false, key, () -> nccl.ncclParamBind(out, key));
    }

    /** The parameter's value as NCCL's {@code int8_t} … {@code uint64_t} accessors read it (the type must match). */
    public static int ncclParamGetI8(ncclParamHandle h, BytePointer out) {
        return FacadeParams.get("ncclParamGetI8", h, out, false, () -> nccl.ncclParamGetI8(h, out));
    }
    public static int ncclParamGetI8(ncclParamHandle h, ByteBuffer out) {
        return FacadeParams.get("ncclParamGetI8", h, out, false, () -> nccl.ncclParamGetI8(h, out));
    }
    public static int ncclParamGetI8(ncclParamHandle h, byte[] out) {
        return FacadeParams.get("ncclParamGetI8", h, out, false, () -> nccl.ncclParamGetI8(h, out));
    }

    public static int ncclParamGetI16(ncclParamHandle h, ShortPointer out) {
        return FacadeParams.get("ncclParamGetI16", h, out, false, () -> nccl.ncclParamGetI16(h, out));
    }
    public static int ncclParamGetI16(ncclParamHandle h, ShortBuffer out) {
        return FacadeParams.get("ncclParamGetI16", h, out, false, () -> nccl.ncclParamGetI16(h, out));
    }
    public static int ncclParamGetI16(ncclParamHandle h, short[] out) {
        return FacadeParams.get("ncclParamGetI16", h, out, false, () -> nccl.ncclParamGetI16(h, out));
    }

    public static int ncclParamGetI32(ncclParamHandle h, IntPointer out) {
        return FacadeParams.get("ncclParamGetI32", h, out, false, () -> nccl.ncclParamGetI32(h, out));
    }
    public static int ncclParamGetI32(ncclParamHandle h, IntBuffer out) {
        return FacadeParams.get("ncclParamGetI32", h, out, false, () -> nccl.ncclParamGetI32(h, out));
    }
    public static int ncclParamGetI32(ncclParamHandle h, int[] out) {
        return FacadeParams.get("ncclParamGetI32", h, out, false, () -> nccl.ncclParamGetI32(h, out));
    }

    public static int ncclParamGetI64(ncclParamHandle h, LongPointer out) {
        return FacadeParams.get("ncclParamGetI64", h, out, false, () -> nccl.ncclParamGetI64(h, out));
    }
    public static int ncclParamGetI64(ncclParamHandle h, LongBuffer out) {
        return FacadeParams.get("ncclParamGetI64", h, out, false, () -> nccl.ncclParamGetI64(h, out));
    }
    public static int ncclParamGetI64(ncclParamHandle h, long[] out) {
        return FacadeParams.get("ncclParamGetI64", h, out, false, () -> nccl.ncclParamGetI64(h, out));
    }

    public static int ncclParamGetU8(ncclParamHandle h, BytePointer out) {
        return FacadeParams.get("ncclParamGetU8", h, out, false, () -> nccl.ncclParamGetU8(h, out));
    }
    public static int ncclParamGetU8(ncclParamHandle h, ByteBuffer out) {
        return FacadeParams.get("ncclParamGetU8", h, out, false, () -> nccl.ncclParamGetU8(h, out));
    }
    public static int ncclParamGetU8(ncclParamHandle h, byte[] out) {
        return FacadeParams.get("ncclParamGetU8", h, out, false, () -> nccl.ncclParamGetU8(h, out));
    }

    public static int ncclParamGetU16(ncclParamHandle h, ShortPointer out) {
        return FacadeParams.get("ncclParamGetU16", h, out, false, () -> nccl.ncclParamGetU16(h, out));
    }
    public static int ncclParamGetU16(ncclParamHandle h, ShortBuffer out) {
        return FacadeParams.get("ncclParamGetU16", h, out, false, () -> nccl.ncclParamGetU16(h, out));
    }
    public static int ncclParamGetU16(ncclParamHandle h, short[] out) {
        return FacadeParams.get("ncclParamGetU16", h, out, false, () -> nccl.ncclParamGetU16(h, out));
    }

    public static int ncclParamGetU32(ncclParamHandle h, IntPointer out) {
        return FacadeParams.get("ncclParamGetU32", h, out, false, () -> nccl.ncclParamGetU32(h, out));
    }
    public static int ncclParamGetU32(ncclParamHandle h, IntBuffer out) {
        return FacadeParams.get("ncclParamGetU32", h, out, false, () -> nccl.ncclParamGetU32(h, out));
    }
    public static int ncclParamGetU32(ncclParamHandle h, int[] out) {
        return FacadeParams.get("ncclParamGetU32", h, out, false, () -> nccl.ncclParamGetU32(h, out));
    }

    public static int ncclParamGetU64(ncclParamHandle h, LongPointer out) {
        return FacadeParams.get("ncclParamGetU64", h, out, false, () -> nccl.ncclParamGetU64(h, out));
    }
    public static int ncclParamGetU64(ncclParamHandle h, LongBuffer out) {
        return FacadeParams.get("ncclParamGetU64", h, out, false, () -> nccl.ncclParamGetU64(h, out));
    }
    public static int ncclParamGetU64(ncclParamHandle h, long[] out) {
        return FacadeParams.get("ncclParamGetU64", h, out, false, () -> nccl.ncclParamGetU64(h, out));
    }

    /** The parameter's string; the {@code BytePointer} form gets NCCL's pointer into the object (as bytedeco's). */
    public static int ncclParamGetStr(ncclParamHandle h, PointerPointer out) {
        return FacadeParams.get("ncclParamGetStr", h, out, false, () -> nccl.ncclParamGetStr(h, out));
    }
    public static int ncclParamGetStr(ncclParamHandle h, BytePointer out) {
        return FacadeParams.get("ncclParamGetStr", h, out, true, () -> nccl.ncclParamGetStr(h, out));
    }
    public static int ncclParamGetStr(ncclParamHandle h, ByteBuffer out) {
        return FacadeParams.get("ncclParamGetStr", h, out, false, () -> nccl.ncclParamGetStr(h, out));
    }
    public static int ncclParamGetStr(ncclParamHandle h, byte[] out) {
        return FacadeParams.get("ncclParamGetStr", h, out, false, () -> nccl.ncclParamGetStr(h, out));
    }

    /** The value's bytes into {@code out}, at most {@code maxLen}; their count into {@code len}. */
    public static int ncclParamGet(ncclParamHandle h, Pointer out, int maxLen, IntPointer len) {
        return FacadeParams.getBytes(h, len, () -> nccl.ncclParamGet(h, out, maxLen, len));
    }
    public static int ncclParamGet(ncclParamHandle h, Pointer out, int maxLen, IntBuffer len) {
        return FacadeParams.getBytes(h, len, () -> nccl.ncclParamGet(h, out, maxLen, len));
    }
    public static int ncclParamGet(ncclParamHandle h, Pointer out, int maxLen, int[] len) {
        return FacadeParams.getBytes(h, len, () -> nccl.ncclParamGet(h, out, maxLen, len));
    }

    /** The text of the parameter {@code key} and its length, by key. */
    public static int ncclParamGetParameter(BytePointer key, PointerPointer value, IntPointer valueLen) {
        return FacadeParams.getParameter(key, value, valueLen, () -> nccl.ncclParamGetParameter(key, value, valueLen));
    }
    public static int ncclParamGetParameter(BytePointer key, BytePointer value, IntPointer valueLen) {
        return FacadeParams.getParameter(key, value, valueLen, () -> nccl.ncclParamGetParameter(key, value, valueLen));
    }
    public static int ncclParamGetParameter(String key, ByteBuffer value, IntBuffer valueLen) {
        return FacadeParams.getParameter(key, value, valueLen, () -> nccl.ncclParamGetParameter(key, value, valueLen));
    }
    public static int ncclParamGetParameter(BytePointer key, byte[] value, int[] valueLen) {
        return FacadeParams.getParameter(key, value, valueLen, () -> nccl.ncclParamGetParameter(key, value, valueLen));
    }
    public static int ncclParamGetParameter(String key, BytePointer value, IntPointer valueLen) {
        return FacadeParams.getParameter(key, value, valueLen, () -> nccl.ncclParamGetParameter(key, value, valueLen));
    }
    public static int ncclParamGetParameter(BytePointer key, ByteBuffer value, IntBuffer valueLen) {
        return FacadeParams.getParameter(key, value, valueLen, () -> nccl.ncclParamGetParameter(key, value, valueLen));
    }
    public static int ncclParamGetParameter(String key, byte[] value, int[] valueLen) {
        return FacadeParams.getParameter(key, value, valueLen, () -> nccl.ncclParamGetParameter(key, value, valueLen));
    }

    /** The keys NCCL publishes: NCCL's table into {@code table}, its length into {@code tableLen}. */
    public static int ncclParamGetAllParameterKeys(PointerPointer table, IntPointer tableLen) {
        return FacadeParams.allKeys(table, tableLen, () -> nccl.ncclParamGetAllParameterKeys(table, tableLen));
    }
    public static int ncclParamGetAllParameterKeys(PointerPointer table, IntBuffer tableLen) {
        return FacadeParams.allKeys(table, tableLen, () -> nccl.ncclParamGetAllParameterKeys(table, tableLen));
    }
    public static int ncclParamGetAllParameterKeys(PointerPointer table, int[] tableLen) {
        return FacadeParams.allKeys(table, tableLen, () -> nccl.ncclParamGetAllParameterKeys(table, tableLen));
    }

    /** NCCL prints every parameter; where it cannot (missing, older than 2.30), ncclGetLastError(NULL) says why. */
    public static void ncclParamDumpAll() {
        FacadeParams.dumpAll();
    }
}
