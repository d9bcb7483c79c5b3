package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.function.IntSupplier;
import org.bytedeco.cuda.nccl.ncclParamHandle;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.ShortPointer;
import org.junit.jupiter.api.Test;

/**
 * NCCL 2.30's ncclParam* functions through the facade: NCCL's argument checks hold wherever it runs
 * (ncclInvalidArgument, the last error naming the argument); a well-formed call is the NCCL library's, so where
 * NCCL is missing it is ncclSystemError saying so, where the NCCL loaded is older than 2.30 ncclInvalidUsage naming
 * both versions, and with 2.30 or later NCCL's own answer.
 */
class FacadeParamsTest {
    /** True where NCCL 2.30 or later is loaded: the calls reach NCCL, so no made-up handle may be passed. */
    private static boolean nccl230() {
        return CudaLibraries.ncclAvailable() && NcclVersions.loaded() >= NcclVersions.V2_30;
    }

    /** {@code rc} is {@code code}, and the last error (ncclGetLastError) contains every text. */
    private static void refused(int code, int rc, String... texts) {
        assertEquals(code, rc);
        String last = ncclGetLastError(null).getString();
        for (String text : texts) {
            assertTrue(last.contains(text), last);
        }
    }

    private static ncclParamHandle handle(long address) {
        ncclParamHandle h = new ncclParamHandle();
        NcclFacade.setAddress(h, address);
        return h;
    }

    @Test
    void aNullHandleKeyOrOutputIsAnInvalidArgument() {
        ncclParamHandle nul = new ncclParamHandle(); // address 0: NCCL's NULL handle
        try (BytePointer key = new BytePointer("NCCL_DEBUG"); PointerPointer<?> none = new PointerPointer<>(1)) {
            refused(ncclInvalidArgument, ncclParamBind((ncclParamHandle) null, key), "ncclParamBind", "out: NULL");
            refused(ncclInvalidArgument, ncclParamBind(new ncclParamHandle(), (BytePointer) null), "key: NULL");
            refused(ncclInvalidArgument, ncclParamBind(new ncclParamHandle(), new BytePointer()), "key: NULL");
            refused(ncclInvalidArgument, ncclParamBind(new PointerPointer<>(), "NCCL_DEBUG"), "out: NULL");
            refused(ncclInvalidArgument, ncclParamBind(none, (String) null), "key: NULL");

            IntSupplier[] nullHandle = {
                () -> ncclParamGetI8(nul, new byte[1]), () -> ncclParamGetI16(nul, new short[1]),
                () -> ncclParamGetI32(nul, new int[1]), () -> ncclParamGetI64(nul, new long[1]),
                () -> ncclParamGetU8(nul, ByteBuffer.allocate(1)), () -> ncclParamGetU16(nul, ShortBuffer.allocate(1)),
                () -> ncclParamGetU32(nul, IntBuffer.allocate(1)), () -> ncclParamGetU64(nul, LongBuffer.allocate(1)),
                () -> ncclParamGetStr(nul, new BytePointer()), () -> ncclParamGetStr((ncclParamHandle) null, none),
                () -> ncclParamGet(nul, null, 0, new int[1]),
            };
            for (IntSupplier call : nullHandle) {
                refused(ncclInvalidArgument, call.getAsInt(), "h: NULL");
            }
            ncclParamHandle h = handle(0x10); // never reaches NCCL: every call below fails its checks first
            IntSupplier[] nullOut = {
                () -> ncclParamGetI8(h, (byte[]) null), () -> ncclParamGetI16(h, new short[0]),
                () -> ncclParamGetI32(h, new IntPointer()), () -> ncclParamGetI64(h, LongBuffer.allocate(0)),
                () -> ncclParamGetU8(h, new BytePointer()), () -> ncclParamGetU16(h, new ShortPointer()),
                () -> ncclParamGetU32(h, IntBuffer.allocate(1).asReadOnlyBuffer()),
                () -> ncclParamGetU64(h, new LongPointer()), () -> ncclParamGetStr(h, new PointerPointer<>()),
                () -> ncclParamGetStr(h, (BytePointer) null), () -> ncclParamGetStr(h, new byte[0]),
                () -> ncclParamGetStr(h, (ByteBuffer) null),
            };
            for (IntSupplier call : nullOut) {
                refused(ncclInvalidArgument, call.getAsInt(), "out: NULL");
            }
            refused(ncclInvalidArgument, ncclParamGet(h, null, 0, (IntPointer) null), "ncclParamGet", "len: NULL");
            refused(ncclInvalidArgument, ncclParamGet(h, null, 0, IntBuffer.allocate(0)), "len: NULL");

            refused(ncclInvalidArgument, ncclParamGetParameter((String) null, new byte[8], new int[1]),
                    "ncclParamGetParameter", "key: NULL");
            refused(ncclInvalidArgument, ncclParamGetParameter(new BytePointer(), new PointerPointer<>(1),
                    new IntPointer(1L)), "key: NULL");
            refused(ncclInvalidArgument, ncclParamGetParameter(key, new PointerPointer<>(), new IntPointer(1L)),
                    "value: NULL");
            refused(ncclInvalidArgument, ncclParamGetParameter("NCCL_DEBUG", (BytePointer) null, new IntPointer(1L)),
                    "value: NULL");
            refused(ncclInvalidArgument, ncclParamGetParameter(key, new BytePointer(), (IntPointer) null),
                    "valueLen: NULL");
            refused(ncclInvalidArgument, ncclParamGetParameter("NCCL_DEBUG", ByteBuffer.allocate(8), IntBuffer.allocate(0)),
                    "valueLen: NULL");
            refused(ncclInvalidArgument, ncclParamGetAllParameterKeys(null, new int[1]),
                    "ncclParamGetAllParameterKeys", "table: NULL");
            refused(ncclInvalidArgument, ncclParamGetAllParameterKeys(new PointerPointer<>(), IntBuffer.allocate(1)),
                    "table: NULL");
            refused(ncclInvalidArgument, ncclParamGetAllParameterKeys(none, (IntPointer) null), "tableLen: NULL");
        }
    }

    /** Without NCCL, or with one older than 2.30: a well-formed call says why NCCL cannot answer it. */
    @Test
    void aWellFormedCallNeedsNccl230() {
        assumeTrue(!nccl230(), "NCCL 2.30 or later is loaded: its own answers are checked below");
        boolean missing = !CudaLibraries.ncclAvailable();
        int code = missing ? ncclSystemError : ncclInvalidUsage;
        String why = missing ? "it is missing" : "needs NCCL 2.30.0 or later; the NCCL loaded is 2.";
        ncclParamHandle h = handle(0x10);
        try (BytePointer key = new BytePointer("NCCL_DEBUG"); PointerPointer<?> out = new PointerPointer<>(1);
             IntPointer len = new IntPointer(1L)) {
            refused(code, ncclParamBind(new ncclParamHandle(), key), "ncclParamBind", why);
            refused(code, ncclParamBind(out, "NCCL_DEBUG"), why);
            refused(code, ncclParamGetI32(h, new int[1]), "ncclParamGetI32");
            refused(code, ncclParamGetU64(h, new long[1]), why);
            refused(code, ncclParamGetStr(h, new BytePointer()), "ncclParamGetStr");
            refused(code, ncclParamGet(h, null, 0, len), "ncclParamGet");
            refused(code, ncclParamGetParameter(key, new BytePointer(), len), "ncclParamGetParameter");
            refused(code, ncclParamGetAllParameterKeys(out, len), "ncclParamGetAllParameterKeys");
            refused(code, ncclParamGetAllParameterKeys(out, len), why);
            ncclParamDumpAll(); // void: ncclGetLastError says why nothing was dumped
            String last = ncclGetLastError(null).getString();
            assertTrue(last.startsWith("ncclParamDumpAll: ") && last.contains(why), last);
        }
    }

    /** With NCCL 2.30 or later the calls are NCCL's: its published keys, and the text of the first. */
    @Test
    void withNccl230TheParametersAreNcclsOwn() {
        assumeTrue(nccl230(), "needs NCCL 2.30 or later loaded");
        try (PointerPointer<BytePointer> table = new PointerPointer<>(1); IntPointer n = new IntPointer(1L)) {
            assertEquals(ncclSuccess, ncclParamGetAllParameterKeys(table, n));
            assertTrue(n.get() > 0, "NCCL publishes its parameters");
            PointerPointer<BytePointer> keys = new PointerPointer<>(table.get(0));
            String first = keys.getString(0);
            BytePointer value = new BytePointer(); // @ByPtrPtr: NCCL's pointer to the text comes back in it
            try (IntPointer len = new IntPointer(1L); BytePointer key = new BytePointer(first)) {
                assertEquals(ncclSuccess, ncclParamGetParameter(first, value, len), first);
                assertTrue(value.address() != 0 && len.get() >= 0, first);
                ncclParamHandle h = new ncclParamHandle();
                assertEquals(ncclSuccess, ncclParamBind(h, key), first);
                assertTrue(h.address() != 0, first + ": NCCL wrote its handle");
            }
        }
    }
}
