package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.PreMulSum;
import io.flexlink.Reduction;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.DoublePointer;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.ShortPointer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ncclRedOpCreatePreMulSum / ncclRedOpDestroy without a GPU: host-backend communicators registered as facade
 * handles. Each overload, both residences and every type's scalar read exactly (the operation the code names is
 * run on the host backend and its result checked), per-communicator codes, and NCCL's codes for every bad
 * argument; a collective given a bad op answers ncclInvalidArgument before it looks at its stream.
 */
class FacadePreMulSumTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "2")
            .set(FlexLinkConfig.SHARE, "pcie=0.5").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    private HostBackend backend;
    private Communicator[] comms;
    private ncclComm[] handles;

    @BeforeEach
    void setUp() {
        backend = new HostBackend(CONFIG);
        comms = FlexLink.initAll(backend, CONFIG, 0, 1);
        handles = new ncclComm[2];
        for (int r = 0; r < 2; r++) {
            handles[r] = new ncclComm();
            NcclFacade.setAddress(handles[r], NcclFacade.register(comms[r], null, null));
        }
    }

    @AfterEach
    void tearDown() {
        for (int r = 0; r < 2; r++) {
            NcclFacade.remove(handles[r]);
            comms[r].close();
        }
        backend.close();
    }

    private PreMulSum op(int rank, int code) {
        Reduction r = NcclFacade.lookup(handles[rank]).ops.reduction(code);
        assertTrue(r instanceof PreMulSum, "code " + code + " names " + r);
        return (PreMulSum) r;
    }

    /** AllReduce of 1 on rank 0 and 2 on rank 1 (exact in every type) with the operation: 3 * scalar, rounded. */
    private long reduced(int[] codes, DataType type) {
        int n = 64;
        int sz = type.size();
        DeviceMemory[] buf = new DeviceMemory[2];
        RuntimeStream[] streams = new RuntimeStream[2];
        FlexLink.groupStart();
        for (int r = 0; r < 2; r++) {
            buf[r] = backend.allocate(r, (long) n * sz);
            streams[r] = backend.createStream(r, "user" + r);
            ByteBuffer in = ByteBuffer.allocateDirect(n * sz).order(ByteOrder.nativeOrder());
            long one = io.flexlink.runtime.host.FloatFormats.fromDouble(type, r + 1);
            for (int i = 0; i < n; i++) {
                put(in, type, i, one);
            }
            backend.upload(buf[r].address(), in);
            comms[r].allReduce(buf[r].address(), buf[r].address(), n, type, op(r, codes[r]), streams[r]);
        }
        FlexLink.groupEnd();
        long first = -1;
        for (int r = 0; r < 2; r++) {
            streams[r].synchronize();
            ByteBuffer out = ByteBuffer.allocateDirect(n * sz).order(ByteOrder.nativeOrder());
            backend.download(out, buf[r].address());
            for (int i = 0; i < n; i++) {
                long v = get(out, type, i);
                if (first == -1) {
                    first = v;
                }
                assertEquals(first, v, type + " rank " + r + " element " + i);
            }
            streams[r].close();
            buf[r].close();
        }
        return first;
    }

    @Test
    void hostScalarOfEveryTypeIsReadExactlyAtCreation() {
        for (DataType type : DataType.values()) {
            double value = type.isFloatingPoint() ? -0.5 : 5; // exact in every type, and so are 1, 2 and 3 times it
            long bits = io.flexlink.runtime.host.FloatFormats.fromDouble(type, value);
            int[] codes = new int[2];
            for (int r = 0; r < 2; r++) {
                Pointer scalar = scalarPointer(type, bits);
                int[] one = new int[1];
                assertEquals(ncclSuccess, ncclRedOpCreatePreMulSum(one, scalar, type.code(),
                        ncclScalarHostImmediate, handles[r]));
                codes[r] = one[0];
                Pointer.memset(scalar, 0x3C, type.size()); // read at creation: a later change of the host value does nothing
            }
            long want = io.flexlink.runtime.host.FloatFormats.fromDouble(type, 3 * value);
            assertEquals(Long.toHexString(want), Long.toHexString(reduced(codes, type)), type.toString());
        }
    }

    private static Pointer scalarPointer(DataType type, long bits) {
        switch (type.size()) {
            case 1: return new BytePointer(1).put((byte) bits);
            case 2: return new ShortPointer(1).put((short) bits);
            case 4: return type == DataType.FLOAT32 ? new FloatPointer(1).put(Float.intBitsToFloat((int) bits))
                    : new IntPointer(1).put((int) bits);
            default: return type == DataType.FLOAT64 ? new DoublePointer(1).put(Double.longBitsToDouble(bits))
                    : new LongPointer(1).put(bits);
        }
    }

    @Test
    void everyOverloadAndTheDeviceResidence() {
        FloatPointer host = new FloatPointer(1).put(2f);
        IntPointer out = new IntPointer(1);
        IntBuffer buffer = IntBuffer.allocate(2).position(1);
        int[] array = new int[1];
        assertEquals(ncclSuccess, ncclRedOpCreatePreMulSum(out, host, ncclFloat32, ncclScalarHostImmediate, handles[0]));
        assertEquals(ncclSuccess, ncclRedOpCreatePreMulSum(buffer, host, ncclFloat32, ncclScalarHostImmediate,
                handles[0]));
        assertEquals(ncclSuccess, ncclRedOpCreatePreMulSum(array, host, ncclFloat32, ncclScalarHostImmediate,
                handles[0]));
        int a = out.get(0);
        int b = buffer.get(1);
        int c = array[0];
        assertTrue(a >= ncclNumOps && b >= ncclNumOps && c >= ncclNumOps, a + " " + b + " " + c);
        assertTrue(a != b && b != c && a != c, a + " " + b + " " + c);
        assertEquals(0, buffer.get(0), "written at the buffer's position");
        // a device scalar: the rank's device memory, read when each call runs
        DeviceMemory[] scalars = {backend.allocate(0, 4), backend.allocate(1, 4)};
        int[] device = new int[2];
        for (int r = 0; r < 2; r++) {
            Pointer p = new Pointer();
            NcclFacade.setAddress(p, scalars[r].address());
            int[] code = new int[1];
            assertEquals(ncclSuccess, ncclRedOpCreatePreMulSum(code, p, ncclFloat32, ncclScalarDevice, handles[r]));
            device[r] = code[0];
            assertTrue(op(r, device[r]).onDevice());
        }
        for (float s : new float[] {0.5f, -4f}) {
            for (int r = 0; r < 2; r++) {
                ByteBuffer v = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putFloat(0, s);
                backend.upload(scalars[r].address(), v);
            }
            assertEquals(Float.floatToIntBits(3 * s), (int) reduced(device, DataType.FLOAT32), "scalar " + s);
        }
        for (int code : new int[] {a, b, c}) {
            assertEquals(ncclSuccess, ncclRedOpDestroy(code, handles[0]));
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(ncclSuccess, ncclRedOpDestroy(device[r], handles[r]));
            scalars[r].close();
        }
    }

    @Test
    void badArguments() {
        FloatPointer host = new FloatPointer(1).put(2f);
        int[] code = new int[1];
        ncclComm unknown = new ncclComm();
        NcclFacade.setAddress(unknown, 0x7777);
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum((int[]) null, host, ncclFloat32,
                ncclScalarHostImmediate, handles[0]));
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(new int[0], host, ncclFloat32,
                ncclScalarHostImmediate, handles[0]));
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(new IntPointer(), host, ncclFloat32,
                ncclScalarHostImmediate, handles[0]), "a NULL IntPointer");
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, null, ncclFloat32,
                ncclScalarHostImmediate, handles[0]));
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, new Pointer(), ncclFloat32,
                ncclScalarHostImmediate, handles[0]), "a NULL scalar");
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, host, 12, ncclScalarHostImmediate,
                handles[0]), "datatype");
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, host, -1, ncclScalarHostImmediate,
                handles[0]), "datatype");
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, host, ncclFloat32, 2, handles[0]),
                "residence");
        assertTrue(FacadeInfo.lastError(null).getString().contains("residence"), FacadeInfo.lastError(null).getString());
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, host, ncclFloat32, ncclScalarHostImmediate,
                unknown), "an unknown communicator");
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, host, ncclFloat32, ncclScalarHostImmediate,
                null), "a NULL communicator");
        // a host address as a device scalar: the host backend knows it is no device memory
        assertEquals(ncclInvalidArgument, ncclRedOpCreatePreMulSum(code, host, ncclFloat32, ncclScalarDevice,
                handles[0]));

        assertEquals(ncclSuccess, ncclRedOpCreatePreMulSum(code, host, ncclFloat32, ncclScalarHostImmediate,
                handles[0]));
        int op = code[0];
        // per communicator: the code means nothing on another one
        assertEquals(ncclInvalidArgument, ncclRedOpDestroy(op, handles[1]));
        assertEquals(ncclInvalidArgument, ncclAllReduce(host, host, 1, ncclFloat32, op, handles[1], null));
        // the wrong datatype, before the stream is looked at
        assertEquals(ncclInvalidArgument, ncclAllReduce(host, host, 1, ncclFloat16, op, handles[0], null));
        assertTrue(FacadeInfo.lastError(null).getString().contains("FLOAT32"), FacadeInfo.lastError(null).getString());
        for (int builtIn : new int[] {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg}) {
            assertEquals(ncclInvalidArgument, ncclRedOpDestroy(builtIn, handles[0]), "built-in " + builtIn);
        }
        for (int bad : new int[] {-1, op + 1, op + FacadeOps.SLOTS, Integer.MAX_VALUE}) {
            assertEquals(ncclInvalidArgument, ncclRedOpDestroy(bad, handles[0]), "unknown " + bad);
            assertEquals(ncclInvalidArgument, ncclReduce(host, host, 1, ncclFloat32, bad, 0, handles[0], null));
        }
        assertEquals(ncclInvalidArgument, ncclRedOpDestroy(op, unknown));
        assertEquals(ncclSuccess, ncclRedOpDestroy(op, handles[0]));
        assertEquals(ncclInvalidArgument, ncclRedOpDestroy(op, handles[0]), "destroyed twice");
        assertEquals(ncclInvalidArgument, ncclAllReduce(host, host, 1, ncclFloat32, op, handles[0], null),
                "a destroyed op");
        assertEquals(ncclInvalidArgument, ncclReduceScatter(host, host, 1, ncclFloat32, op, handles[0], null));
        // its slot is reused under a new code: the destroyed code stays invalid
        assertEquals(ncclSuccess, ncclRedOpCreatePreMulSum(code, host, ncclFloat32, ncclScalarHostImmediate,
                handles[0]));
        assertNotEquals(op, code[0]);
        assertEquals(ncclInvalidArgument, ncclRedOpDestroy(op, handles[0]));
        assertEquals(ncclSuccess, ncclRedOpDestroy(code[0], handles[0]));
    }

    private static void put(ByteBuffer b, DataType type, int i, long bits) {
        switch (type.size()) {
            case 1: b.put(i, (byte) bits); break;
            case 2: b.putShort(2 * i, (short) bits); break;
            case 4: b.putInt(4 * i, (int) bits); break;
            default: b.putLong(8 * i, bits);
        }
    }

    private static long get(ByteBuffer b, DataType type, int i) {
        switch (type.size()) {
            case 1: return b.get(i) & 0xFFL;
            case 2: return b.getShort(2 * i) & 0xFFFFL;
            case 4: return b.getInt(4 * i) & 0xFFFFFFFFL;
            default: return b.getLong(8 * i);
        }
    }
}
