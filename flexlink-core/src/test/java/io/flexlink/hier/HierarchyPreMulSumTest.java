package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.PreMulSum;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.PreMulSumRanks;
import io.flexlink.testing.Refusals;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * PreMulSum on multi-node communicators (emulated nodes, TCP rails): AllReduce and ReduceScatter in and out of
 * place and Reduce, every type, host scalars and device scalars changed between calls, checked bit for bit on
 * every rank against the Java reference ({@code testing.PreMulSumData}: data on which every sum is exact in any
 * order); on inexact float data every rank holds the same bits, and exactly those of the hierarchy's SUM of the
 * products rounded in Java (the same reduction order). Bad operations are refused before anything is enqueued.
 */
class HierarchyPreMulSumTest {
    private static final int COUNT = 3_001; // not a multiple of the ranks per node: the tail's path too

    private static PreMulSumRanks ranks(HostBackend backend, Communicator[] comms) {
        int[] devices = new int[comms.length];
        for (int r = 0; r < comms.length; r++) {
            devices[r] = comms[r].device();
        }
        return new PreMulSumRanks(backend, comms, devices, COUNT, false);
    }

    @ParameterizedTest(name = "{0} nodes × {1}, round-robin {2}")
    @CsvSource({"2, 2, false", "2, 1, false", "2, 3, true"})
    void everyCollectiveTypeAndScalarEqualsTheReference(int nodes, int perNode, boolean roundRobin) throws Exception {
        try (HostBackend backend = new HostBackend(HierarchyThreadsTest.BASE);
             PreMulSumRanks ranks = ranks(backend, HierarchyThreadsTest.make(backend, nodes, perNode, roundRobin))) {
            ranks.everyCollectiveTypeAndHostScalar();
            ranks.deviceScalarsChangedBetweenCalls();
        }
    }

    /** In sequence, and pipelined (pieces of 16 KB: the AllReduce runs in 8 pieces and a tail). */
    @ParameterizedTest(name = "pieceBytes {0}")
    @CsvSource({"32M", "16K"})
    void inexactFloatProductsAreSummedOnceInTheHierarchysOrder(String pieceBytes) throws Exception {
        io.flexlink.config.FlexLinkConfig config = HierarchyThreadsTest.BASE.with(
                io.flexlink.config.FlexLinkConfig.HIER_PIECE_BYTES, pieceBytes);
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = HierarchyThreadsTest.make(backend, config, 2, 2, false);
            int n = comms.length;
            int count = 40_001;
            float scalar = 0.3f;
            Random random = new Random(21);
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] in = new DeviceMemory[n];
            DeviceMemory[] products = new DeviceMemory[n];
            DeviceMemory[] out = new DeviceMemory[n];
            DeviceMemory[] sum = new DeviceMemory[n];
            PreMulSum[] ops = new PreMulSum[n];
            for (int r = 0; r < n; r++) {
                int d = comms[r].device();
                streams[r] = backend.createStream(d, "pms" + r);
                in[r] = backend.allocate(d, 4L * count);
                products[r] = backend.allocate(d, 4L * count);
                out[r] = backend.allocate(d, 4L * count);
                sum[r] = backend.allocate(d, 4L * count);
                ByteBuffer x = floats(count);
                ByteBuffer p = floats(count);
                for (int i = 0; i < count; i++) {
                    float v = (random.nextFloat() - 0.5f) * (float) Math.pow(2, random.nextInt(20) - 10);
                    x.putFloat(4 * i, v);
                    p.putFloat(4 * i, v * scalar); // the product rounded once to float, as NCCL's PreMulSum
                }
                backend.upload(in[r].address(), x);
                backend.upload(products[r].address(), p);
                ops[r] = comms[r].createPreMulSum(scalar, DataType.FLOAT32);
            }
            for (int r = 0; r < n; r++) {
                comms[r].allReduce(in[r].address(), out[r].address(), count, DataType.FLOAT32, ops[r], streams[r]);
                comms[r].allReduce(products[r].address(), sum[r].address(), count, DataType.FLOAT32, ReduceOp.SUM,
                        streams[r]);
            }
            float[] first = null;
            for (int r = 0; r < n; r++) {
                streams[r].synchronize();
                float[] got = download(backend, out[r], count);
                assertArrayEquals(download(backend, sum[r], count), got, "rank " + r + ": the SUM of the products");
                if (first == null) {
                    first = got;
                }
                for (int i = 0; i < count; i++) {
                    assertEquals(Float.floatToRawIntBits(first[i]), Float.floatToRawIntBits(got[i]),
                            "rank " + r + " element " + i + " is rank 0's bits");
                }
            }
            for (int r = 0; r < n; r++) {
                ops[r].close();
                streams[r].close();
                in[r].close();
                products[r].close();
                out[r].close();
                sum[r].close();
            }
            HierarchyThreadsTest.closeAll(comms);
        }
    }

    @Test
    void badOperationsAreRefusedBeforeAnythingIsEnqueued() throws Exception {
        try (HostBackend backend = new HostBackend(HierarchyThreadsTest.BASE)) {
            Communicator[] comms = HierarchyThreadsTest.make(backend, 2, 1, false);
            RuntimeStream s = backend.createStream(comms[0].device(), "bad");
            DeviceMemory buf = backend.allocate(comms[0].device(), 8L * 64);
            long a = buf.address();
            PreMulSum mine = comms[0].createPreMulSum(2.0, DataType.FLOAT32);
            PreMulSum theirs = comms[1].createPreMulSum(2.0, DataType.FLOAT32);
            Refusals.refused(backend, s, Result.INVALID_ARGUMENT, "op",
                    () -> comms[0].allReduce(a, a, 8, DataType.FLOAT32, theirs, s));
            Refusals.refused(backend, s, Result.INVALID_ARGUMENT, "op",
                    () -> comms[0].reduce(a, a, 8, DataType.INT32, mine, 0, s));
            Refusals.refused(backend, s, Result.INVALID_ARGUMENT, "count",
                    () -> comms[0].reduceScatter(a, a, -1, DataType.FLOAT32, mine, s));
            Refusals.refused(backend, s, Result.INVALID_ARGUMENT, "root",
                    () -> comms[0].reduce(a, a, 8, DataType.FLOAT32, mine, 2, s));
            FlexLink.groupStart();
            try {
                Refusals.refused(backend, s, Result.INVALID_USAGE, "cannot be grouped",
                        () -> comms[0].allReduce(a, a, 8, DataType.FLOAT32, mine, s));
            } finally {
                assertThrows(FlexLinkException.class, FlexLink::groupEnd);
            }
            mine.close();
            Refusals.refused(backend, s, Result.INVALID_ARGUMENT, "op",
                    () -> comms[0].allReduce(a, a, 8, DataType.FLOAT32, mine, s));
            Refusals.refused(backend, s, Result.INVALID_ARGUMENT, "scalar",
                    () -> comms[0].createPreMulSumOnDevice(0, DataType.FLOAT32));
            assertEquals(Result.SUCCESS, comms[0].getAsyncError());
            theirs.close();
            s.close();
            buf.close();
            HierarchyThreadsTest.closeAll(comms);
        }
    }

    private static ByteBuffer floats(int count) {
        return ByteBuffer.allocateDirect(4 * count).order(ByteOrder.nativeOrder());
    }

    private static float[] download(HostBackend backend, DeviceMemory m, int count) {
        ByteBuffer b = floats(count);
        backend.download(b, m.address());
        float[] f = new float[count];
        b.asFloatBuffer().get(f);
        return f;
    }
}
