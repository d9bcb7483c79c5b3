package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * FlexNccl mirrors org.bytedeco.cuda.global.nccl exactly: every overload of every mirrored function
 * with the same parameter and return types, and every constant with the same type and value (those FlexNccl
 * inherits from FlexNcclConstants included: a static import of FlexNccl imports them too). bytedeco's
 * class is loaded without being initialized (its initializer loads native libraries).
 */
class FlexNcclSignatureTest {
    static final String BYTEDECO = "org.bytedeco.cuda.global.nccl";

    static final List<String> MIRRORED = List.of("ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank",
            "ncclCommInitAll", "ncclCommDestroy", "ncclCommAbort", "ncclCommGetAsyncError", "ncclCommCount",
            "ncclCommCuDevice", "ncclCommUserRank", "ncclGetErrorString", "ncclAllReduce", "ncclAllGather",
            "ncclReduceScatter", "ncclBroadcast", "ncclReduce", "ncclAlltoAll", "ncclGather", "ncclScatter",
            "ncclSend", "ncclRecv", "ncclGroupStart",
            "ncclGroupEnd", "ncclCommSplit",
            "ncclCommInitRankConfig", "ncclBcast", "ncclGetLastError", "ncclResetDebugInit",
            "ncclRedOpCreatePreMulSum", "ncclRedOpDestroy",
            "ncclCommFinalize", "ncclCommRevoke", "ncclCommShrink", "ncclCommInitRankScalable",
            "ncclGroupSimulateEnd", "ncclCommGetUniqueId", "ncclCommGrow",
            "ncclMemAlloc", "ncclMemFree", "ncclCommRegister", "ncclCommDeregister",
            "ncclCommWindowRegister", "ncclCommWindowDeregister", "ncclWinGetUserPtr", "ncclPutSignal", "ncclSignal",
            "ncclWaitSignal", "ncclCommSuspend", "ncclCommResume", "ncclCommMemStats", "ncclParamBind",
            "ncclParamGetI8", "ncclParamGetI16", "ncclParamGetI32", "ncclParamGetI64", "ncclParamGetU8",
            "ncclParamGetU16", "ncclParamGetU32", "ncclParamGetU64", "ncclParamGetStr", "ncclParamGet",
            "ncclParamGetParameter", "ncclParamGetAllParameterKeys", "ncclParamDumpAll");

    static final List<String> REQUIRED_CONSTANTS = List.of("NCCL_UNIQUE_ID_BYTES",
            "ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument",
            "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress", "ncclTimeout", "ncclNumResults",
            "ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg", "ncclNumOps",
            "ncclInt8", "ncclChar", "ncclUint8", "ncclInt32", "ncclInt", "ncclUint32", "ncclInt64", "ncclUint64",
            "ncclFloat16", "ncclHalf", "ncclFloat32", "ncclFloat", "ncclFloat64", "ncclDouble", "ncclBfloat16",
            "ncclFloat8e4m3", "ncclFloat8e5m2", "ncclNumTypes", "NCCL_SPLIT_NOCOLOR", "ncclScalarDevice",
            "ncclScalarHostImmediate",
            "NCCL_SHRINK_DEFAULT", "NCCL_SHRINK_ABORT", "NCCL_REVOKE_DEFAULT",
            "NCCL_WIN_DEFAULT", "NCCL_WIN_COLL_SYMMETRIC", "NCCL_WIN_STRICT_ORDERING", "NCCL_WIN_REQUIRED_ALIGNMENT",
            "NCCL_SUSPEND_MEM", "ncclStatGpuMemSuspend", "ncclStatGpuMemSuspended", "ncclStatGpuMemPersist",
            "ncclStatGpuMemTotal");

    private static Class<?> bytedeco() throws ClassNotFoundException {
        return Class.forName(BYTEDECO, false, FlexNcclSignatureTest.class.getClassLoader());
    }

    private static String signature(Method m) {
        return m.getReturnType().getName() + " " + m.getName() + Arrays.stream(m.getParameterTypes())
                .map(Class::getName).collect(Collectors.joining(", ", "(", ")"));
    }

    /**
     * The public static methods {@code c} declares or inherits from its superclasses (FlexNccl's themes:
     * FlexNcclMemory, FlexNcclParams; a static import of FlexNccl imports those too, JLS 7.5.4).
     */
    private static Set<String> publicStatic(Class<?> c, String name) {
        Set<String> out = new TreeSet<>();
        for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
            for (Method m : k.getDeclaredMethods()) {
                int mod = m.getModifiers();
                if (Modifier.isPublic(mod) && Modifier.isStatic(mod) && (name == null || m.getName().equals(name))) {
                    out.add(signature(m));
                }
            }
        }
        return out;
    }

    @Test
    void flexNcclsSuperclassesArePublicAndCannotBeMade() {
        for (Class<?> k = FlexNccl.class.getSuperclass(); k != Object.class; k = k.getSuperclass()) {
            assertTrue(Modifier.isPublic(k.getModifiers()) && Modifier.isAbstract(k.getModifiers()), k.getName());
            for (java.lang.reflect.Constructor<?> ctor : k.getDeclaredConstructors()) {
                int mod = ctor.getModifiers();
                assertTrue(!Modifier.isPublic(mod) && !Modifier.isProtected(mod), k.getName() + " " + ctor);
            }
        }
    }

    @Test
    void everyMirroredFunctionHasExactlyBytedecosOverloads() throws Exception {
        Class<?> theirs = bytedeco();
        for (String name : MIRRORED) {
            Set<String> expected = publicStatic(theirs, name);
            assertTrue(!expected.isEmpty(), "bytedeco has no " + name);
            assertEquals(expected, publicStatic(FlexNccl.class, name), name);
        }
    }

    @Test
    void flexNcclHasNoOtherPublicMethods() {
        for (String s : publicStatic(FlexNccl.class, null)) {
            String name = s.substring(s.indexOf(' ') + 1, s.indexOf('('));
            assertTrue(MIRRORED.contains(name), "FlexNccl." + s + " is not a mirrored NCCL function");
        }
    }

    @Test
    void everyConstantMatchesBytedecosValue() throws Exception {
        Class<?> theirs = bytedeco();
        Map<String, Object> values = ClassFileConstants.read(FlexNcclSignatureTest.class, BYTEDECO);
        int checked = 0;
        for (Field f : FlexNccl.class.getFields()) { // public, FlexNcclConstants' included
            int mod = f.getModifiers();
            if (!Modifier.isPublic(mod)) {
                continue;
            }
            assertTrue(Modifier.isStatic(mod) && Modifier.isFinal(mod), f.getName());
            Field t = theirs.getDeclaredField(f.getName()); // no class initialization
            assertEquals(t.getType(), f.getType(), f.getName());
            assertTrue(Modifier.isStatic(t.getModifiers()) && Modifier.isFinal(t.getModifiers()), f.getName());
            assertTrue(values.containsKey(f.getName()), f.getName() + " is not a compile-time constant in bytedeco");
            assertEquals(values.get(f.getName()), f.get(null), f.getName());
            checked++;
        }
        for (String required : REQUIRED_CONSTANTS) {
            Field f = FlexNccl.class.getField(required);
            assertTrue(Modifier.isPublic(f.getModifiers()), required);
        }
        assertTrue(checked >= REQUIRED_CONSTANTS.size());
    }
}
