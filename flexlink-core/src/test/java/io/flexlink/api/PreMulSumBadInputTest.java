package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Buffer;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.PreMulSum;
import io.flexlink.Reduction;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * A PreMulSum's bad arguments: a FlexLinkException naming the argument, nothing enqueued, the operation and
 * the communicator still usable afterwards.
 */
class PreMulSumBadInputTest {
    private static final long N = 1024;
    private HostBackend backend;
    private Communicator[] comms;
    private Communicator other;
    private DeviceMemory send;
    private DeviceMemory recv;
    private RuntimeStream stream;

    @BeforeEach
    void setUp() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        backend = new HostBackend(config);
        comms = FlexLink.initAll(backend, config, 0);
        other = FlexLink.initAll(backend, config, 0)[0];
        send = backend.allocate(0, N * 8);
        recv = backend.allocate(0, N * 8);
        stream = backend.createStream(0, "user");
    }

    @AfterEach
    void tearDown() {
        comms[0].close();
        other.close();
        stream.close();
        send.close();
        recv.close();
        backend.close();
    }

    private void rejects(Result result, String argument, Executable call) {
        io.flexlink.testing.Refusals.refused(backend, stream, result, argument, call);
    }

    /** One rank: the result is the input times the scalar; 2 * 1.5 = 3 exactly. */
    private void works(PreMulSum op) {
        ByteBuffer in = ByteBuffer.allocateDirect((int) N * 4).order(java.nio.ByteOrder.nativeOrder());
        for (int i = 0; i < N; i++) {
            in.putFloat(4 * i, 2f);
        }
        backend.upload(send.address(), in);
        backend.fill(recv.address(), N * 4, (byte) 0xA5);
        comms[0].allReduce(send.address(), recv.address(), N, DataType.FLOAT32, op, stream);
        stream.synchronize();
        ByteBuffer out = ByteBuffer.allocateDirect((int) N * 4).order(java.nio.ByteOrder.nativeOrder());
        backend.download(out, recv.address());
        for (int i = 0; i < N; i++) {
            assertEquals(3f, out.getFloat(4 * i), "element " + i);
        }
    }

    @Test
    void creation() {
        Communicator c = comms[0];
        rejects(Result.INVALID_ARGUMENT, "datatype", () -> c.createPreMulSum(1.5, null));
        rejects(Result.INVALID_ARGUMENT, "datatype", () -> c.createPreMulSum(2L, null));
        rejects(Result.INVALID_ARGUMENT, "datatype", () -> c.createPreMulSumOnDevice(send.address(), null));
        rejects(Result.INVALID_ARGUMENT, "scalar: null", () -> c.createPreMulSumOnDevice(0, DataType.FLOAT32));
        rejects(Result.INVALID_ARGUMENT, "scalar", () -> c.createPreMulSumOnDevice(12345, DataType.FLOAT32));
        // one element must fit: the last 2 bytes of an allocation hold no FLOAT32
        rejects(Result.INVALID_ARGUMENT, "scalar", () -> c.createPreMulSumOnDevice(send.address() + N * 8 - 2,
                DataType.FLOAT32));
        try (PreMulSum op = c.createPreMulSum(1.5, DataType.FLOAT32)) {
            assertEquals(DataType.FLOAT32, op.type());
            assertTrue(!op.onDevice() && !op.isClosed());
            works(op);
        }
    }

    @Test
    void badOperations() {
        Communicator c = comms[0];
        long s = send.address();
        long r = recv.address();
        PreMulSum op = c.createPreMulSum(1.5, DataType.FLOAT32);
        PreMulSum foreign = other.createPreMulSum(1.5, DataType.FLOAT32);
        rejects(Result.INVALID_ARGUMENT, "another communicator", () -> c.allReduce(s, r, N, DataType.FLOAT32, foreign,
                stream));
        rejects(Result.INVALID_ARGUMENT, "op: the PreMulSum was made for FLOAT32",
                () -> c.allReduce(s, r, N, DataType.FLOAT16, op, stream));
        rejects(Result.INVALID_ARGUMENT, "op: the PreMulSum was made for FLOAT32",
                () -> c.reduceScatter(s, r, N, DataType.INT32, op, stream));
        rejects(Result.INVALID_ARGUMENT, "op: the PreMulSum was made for FLOAT32",
                () -> c.reduce(s, r, N, DataType.FLOAT64, op, 0, stream));
        rejects(Result.INVALID_ARGUMENT, "op: null", () -> c.allReduce(s, r, N, DataType.FLOAT32, (Reduction) null,
                stream));
        // the call's other arguments are still checked
        rejects(Result.INVALID_ARGUMENT, "stream", () -> c.allReduce(s, r, N, DataType.FLOAT32, op, null));
        rejects(Result.INVALID_ARGUMENT, "root", () -> c.reduce(s, r, N, DataType.FLOAT32, op, 3, stream));
        rejects(Result.INVALID_ARGUMENT, "recvbuff", () -> c.allReduce(s, r + N * 8, N, DataType.FLOAT32, op,
                stream));
        Buffer small = Buffer.wrap(s, 4 * (N - 1), 0);
        rejects(Result.INVALID_ARGUMENT, "needs", () -> c.allReduce(small, small, N, DataType.FLOAT32, op, stream));
        works(op); // none of that harmed it
        op.close();
        op.close(); // a second destroy does nothing
        assertTrue(op.isClosed());
        rejects(Result.INVALID_ARGUMENT, "destroyed", () -> c.allReduce(s, r, N, DataType.FLOAT32, op, stream));
        rejects(Result.INVALID_ARGUMENT, "destroyed", () -> c.reduce(s, r, N, DataType.FLOAT32, op, 0, stream));
        foreign.close();
    }

    @Test
    void freedDeviceScalar() {
        Communicator c = comms[0];
        DeviceMemory scalar = backend.allocate(0, 4);
        PreMulSum op = c.createPreMulSumOnDevice(scalar.address(), DataType.FLOAT32);
        ByteBuffer v = ByteBuffer.allocateDirect(4).order(java.nio.ByteOrder.nativeOrder());
        v.putFloat(0, 1.5f);
        backend.upload(scalar.address(), v);
        works(op);
        scalar.close();
        // the host backend knows the memory is gone: refused, never read
        rejects(Result.INVALID_ARGUMENT, "scalar", () -> c.allReduce(send.address(), recv.address(), N,
                DataType.FLOAT32, op, stream));
        op.close();
    }

    @Test
    void closedCommunicator() {
        Communicator c = FlexLink.initAll(backend, FlexLinkConfig.builder().set(FlexLinkConfig.TUNING_CACHE, "off")
                .build(), 0)[0];
        PreMulSum op = c.createPreMulSum(1.5, DataType.FLOAT32);
        c.close();
        rejects(Result.INVALID_USAGE, "closed", () -> c.createPreMulSum(1.5, DataType.FLOAT32));
        rejects(Result.INVALID_USAGE, "closed", () -> c.allReduce(send.address(), recv.address(), N,
                DataType.FLOAT32, op, stream));
    }
}
