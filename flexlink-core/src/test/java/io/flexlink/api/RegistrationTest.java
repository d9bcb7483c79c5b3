package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.Registration;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Communicator.register on the host backend, whose primary ring has no registration of its own (FlexLink keeps
 * the record): handles, overlapping ranges, each bad argument, and the handles' end with the communicator's
 * close, abort, finalize and revoke.
 */
class RegistrationTest {
    private static final long N = 1024;
    private HostBackend backend;
    private Communicator[] comms;
    private DeviceMemory[] buf;
    private RuntimeStream stream;
    private FlexLinkConfig config;

    @BeforeEach
    void setUp() {
        config = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "2")
                .set(FlexLinkConfig.SHARE, "pcie=0.5").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        backend = new HostBackend(config);
        comms = FlexLink.initAll(backend, config, 0, 1);
        buf = new DeviceMemory[] {backend.allocate(0, N * 4), backend.allocate(1, N * 4)};
        stream = backend.createStream(0, "user");
    }

    @AfterEach
    void tearDown() {
        for (Communicator c : comms) {
            c.close();
        }
        stream.close();
        for (DeviceMemory m : buf) {
            m.close();
        }
        backend.close();
    }

    private void refused(Result result, String argument, Executable call) {
        io.flexlink.testing.Refusals.refused(backend, stream, result, argument, call);
    }

    @Test
    void aRegistrationIsAHandleOfItsOwnAndClosesOnce() {
        Communicator c = comms[0];
        long a = buf[0].address();
        Registration whole = c.register(a, N * 4);
        Registration same = c.register(a, N * 4); // identical and overlapping ranges are allowed, as in NCCL
        Registration part = c.register(a + 64, 128);
        assertNotSame(whole, same);
        assertEquals(a, whole.address());
        assertEquals(N * 4, whole.bytes());
        assertFalse(whole.withPrimary(), "the host ring registers nothing: FlexLink's record only");
        assertFalse(whole.isClosed());
        assertEquals(List.of(whole, same, part), c.registrations());
        same.close();
        assertTrue(same.isClosed());
        same.close(); // idempotent
        assertEquals(List.of(whole, part), c.registrations());
        assertEquals(List.of(), comms[1].registrations(), "local to the rank");
        part.close();
        whole.close();
        assertEquals(List.of(), c.registrations());
    }

    @Test
    void collectivesRunOnRegisteredBuffers() {
        RuntimeStream s1 = backend.createStream(1, "user1");
        try {
            Registration[] regs = {comms[0].register(buf[0].address(), N * 4), comms[1].register(buf[1].address(),
                    N * 4)};
            ByteBuffer in = ByteBuffer.allocateDirect((int) N * 4).order(ByteOrder.nativeOrder());
            for (int i = 0; i < N; i++) {
                in.putFloat(4 * i, i);
            }
            backend.upload(buf[0].address(), in);
            backend.upload(buf[1].address(), in);
            FlexLink.groupStart();
            comms[0].allReduce(buf[0].address(), buf[0].address(), N, DataType.FLOAT32, ReduceOp.SUM, stream);
            comms[1].allReduce(buf[1].address(), buf[1].address(), N, DataType.FLOAT32, ReduceOp.SUM, s1);
            FlexLink.groupEnd();
            stream.synchronize();
            s1.synchronize();
            ByteBuffer out = ByteBuffer.allocateDirect((int) N * 4).order(ByteOrder.nativeOrder());
            backend.download(out, buf[1].address());
            for (int i = 0; i < N; i++) {
                assertEquals(2f * i, out.getFloat(4 * i), "element " + i);
            }
            for (Registration r : regs) {
                r.close();
            }
        } finally {
            s1.close();
        }
    }

    @Test
    void badArgumentsNameTheArgument() {
        Communicator c = comms[0];
        long a = buf[0].address();
        refused(Result.INVALID_ARGUMENT, "address", () -> c.register(0, 64));
        refused(Result.INVALID_ARGUMENT, "bytes", () -> c.register(a, 0));
        refused(Result.INVALID_ARGUMENT, "bytes", () -> c.register(a, -1));
        refused(Result.INVALID_ARGUMENT, "bytes", () -> c.register(-64, 128)); // past the end of the address space
        refused(Result.INVALID_ARGUMENT, "address", () -> c.register(a, N * 4 + 1)); // past the allocation
        refused(Result.INVALID_ARGUMENT, "address", () -> c.register(buf[1].address(), 64)); // rank 1's device
        assertEquals(List.of(), c.registrations(), "nothing recorded");
        c.register(a, 64).close(); // still usable
    }

    @Test
    void closeDeregistersWhatIsStillOpenAndRefusesMore() {
        Registration r = comms[0].register(buf[0].address(), 64);
        comms[0].close();
        assertTrue(r.isClosed(), "deregistered with the communicator");
        assertEquals(List.of(), comms[0].registrations());
        r.close(); // after the communicator: nothing left to do
        refused(Result.INVALID_USAGE, "closed", () -> comms[0].register(buf[0].address(), 64));
        refused(Result.INVALID_USAGE, "closed", () -> comms[0].register(0, 0)); // a closed communicator first
    }

    @Test
    void abortDeregistersToo() {
        Registration r = comms[1].register(buf[1].address(), 64);
        comms[1].abort();
        assertTrue(r.isClosed());
        assertEquals(List.of(), comms[1].registrations());
        refused(Result.INVALID_USAGE, "aborted", () -> comms[1].register(buf[1].address(), 64));
    }

    /** A rank made inside a group is a handle until the group's end made it: then it registers like any other. */
    @Test
    void aCommunicatorMadeInAGroupRegistersOnceMade() {
        Communicator c;
        FlexLink.groupStart();
        try {
            c = FlexLink.initRank(backend, config, 1, FlexLink.getUniqueId(), 0, 0);
            Communicator early = c;
            refused(Result.INVALID_USAGE, "groupEnd", () -> early.register(buf[0].address(), 64));
            assertEquals(List.of(), c.registrations());
        } finally {
            FlexLink.groupEnd();
        }
        try {
            Registration r = c.register(buf[0].address(), 64);
            assertEquals(List.of(r), c.registrations());
            c.close();
            assertTrue(r.isClosed());
        } finally {
            c.close();
        }
    }

    @Test
    void aFinalizedOrRevokedCommunicatorRegistersNothing() {
        comms[0].finalizeComm();
        refused(Result.INVALID_USAGE, "finalized", () -> comms[0].register(buf[0].address(), 64));
        comms[1].revoke();
        refused(Result.INVALID_USAGE, "revoked", () -> comms[1].register(buf[1].address(), 64));
    }
}
