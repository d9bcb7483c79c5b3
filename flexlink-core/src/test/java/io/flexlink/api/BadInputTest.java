package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad input gets a FlexLinkException with NCCL's result code and a message naming the argument, before
 * anything is enqueued; the next valid call still works.
 */
class BadInputTest {
    private static final long N = 4096;
    private HostBackend backend;
    private Communicator[] comms;
    private CollectiveHarness harness;
    private DeviceMemory send;
    private DeviceMemory recv;
    private RuntimeStream stream;

    @BeforeEach
    void setUp() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K").build();
        backend = new HostBackend(config);
        comms = FlexLink.initAll(backend, config, 0, 1);
        harness = new CollectiveHarness(backend, comms);
        send = backend.allocate(0, N * 4 * 2);
        recv = backend.allocate(0, N * 4 * 2);
        stream = harness.stream(0);
    }

    @AfterEach
    void tearDown() {
        harness.close();
        for (Communicator c : comms) {
            c.close();
        }
        send.close();
        recv.close();
        backend.close();
    }

    /** Asserts the call fails with {@code result}, names {@code argument}, and enqueued nothing. */
    private void rejects(Result result, String argument, Executable call) {
        io.flexlink.testing.Refusals.refused(backend, stream, result, argument, call);
        stillWorks();
    }

    private void stillWorks() {
        CollectiveHarness.Outcome o = harness.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, N, 0, false, 7);
        assertEquals(0, o.wrong, o.toString());
    }

    @Test
    void nullBuffers() {
        Communicator c = comms[0];
        rejects(Result.INVALID_ARGUMENT, "sendbuff", () -> c.allReduce(null, recv, N, DataType.FLOAT32, ReduceOp.SUM, stream));
        rejects(Result.INVALID_ARGUMENT, "recvbuff", () -> c.allReduce(send, null, N, DataType.FLOAT32, ReduceOp.SUM, stream));
        rejects(Result.INVALID_ARGUMENT, "sendbuff", () -> c.allGather(0L, recv.address(), N, DataType.FLOAT32, stream));
        rejects(Result.INVALID_ARGUMENT, "recvbuff", () -> c.broadcast(send.address(), 0L, N, DataType.FLOAT32, 1, stream));
    }

    @Test
    void negativeAndOversizedCounts() {
        Communicator c = comms[0];
        rejects(Result.INVALID_ARGUMENT, "count", () -> c.allReduce(send, recv, -1, DataType.FLOAT32, ReduceOp.SUM, stream));
        rejects(Result.INVALID_ARGUMENT, "recvbuff", () -> c.allGather(send, recv, N * 2, DataType.FLOAT32, stream));
        rejects(Result.INVALID_ARGUMENT, "sendbuff", () -> c.reduceScatter(send, recv, N * 2, DataType.FLOAT32, ReduceOp.SUM, stream));
        rejects(Result.INVALID_ARGUMENT, "count",
                () -> c.allReduce(send.address(), recv.address(), Long.MAX_VALUE / 2, DataType.FLOAT64, ReduceOp.SUM, stream));
    }

    @Test
    void unknownTypeAndOpCodes() {
        FlexLinkException t = assertThrows(FlexLinkException.class, () -> DataType.fromCode(12));
        assertEquals(Result.INVALID_ARGUMENT, t.result());
        assertTrue(t.getMessage().contains("datatype"));
        FlexLinkException o = assertThrows(FlexLinkException.class, () -> ReduceOp.fromCode(-1));
        assertEquals(Result.INVALID_ARGUMENT, o.result());
        assertTrue(o.getMessage().contains("op"));
        Communicator c = comms[0];
        rejects(Result.INVALID_ARGUMENT, "datatype", () -> c.allReduce(send, recv, N, null, ReduceOp.SUM, stream));
        rejects(Result.INVALID_ARGUMENT, "op", () -> c.allReduce(send, recv, N, DataType.FLOAT32, null, stream));
    }

    @Test
    void rootOutOfRange() {
        Communicator c = comms[0];
        rejects(Result.INVALID_ARGUMENT, "root", () -> c.broadcast(send, recv, N, DataType.FLOAT32, 2, stream));
        rejects(Result.INVALID_ARGUMENT, "root", () -> c.reduce(send, recv, N, DataType.FLOAT32, ReduceOp.MAX, -1, stream));
    }

    @Test
    void wrongStreamOrDevice() {
        Communicator c = comms[0];
        rejects(Result.INVALID_ARGUMENT, "stream", () -> c.allReduce(send, recv, N, DataType.FLOAT32, ReduceOp.SUM, null));
        RuntimeStream other = harness.stream(1);
        rejects(Result.INVALID_ARGUMENT, "stream", () -> c.allReduce(send, recv, N, DataType.FLOAT32, ReduceOp.SUM, other));
        try (DeviceMemory elsewhere = backend.allocate(1, N * 4)) {
            rejects(Result.INVALID_ARGUMENT, "recvbuff",
                    () -> c.allReduce(send, elsewhere, N, DataType.FLOAT32, ReduceOp.SUM, stream));
        }
        Buffer overlapping = Buffer.wrap(send.address() + 4, N * 4, 0);
        rejects(Result.INVALID_ARGUMENT, "sendbuff",
                () -> c.allReduce(send, overlapping, N, DataType.FLOAT32, ReduceOp.SUM, stream));
    }

    @Test
    void useAfterClose() {
        Communicator[] two = FlexLink.initAll(backend, FlexLinkConfig.builder().build(), 0, 1);
        two[0].close();
        two[0].close(); // idempotent
        long before = backend.enqueuedOps(stream);
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> two[0].allReduce(send, recv, N, DataType.FLOAT32, ReduceOp.SUM, stream));
        assertEquals(Result.INVALID_USAGE, e.result());
        assertTrue(e.getMessage().contains("communicator"));
        // a closed communicator is reported first, even when the arguments are wrong too
        FlexLinkException both = assertThrows(FlexLinkException.class,
                () -> two[0].allReduce(send, recv, N * 100, DataType.FLOAT32, ReduceOp.SUM, stream));
        assertEquals(Result.INVALID_USAGE, both.result(), both.getMessage());
        assertTrue(both.getMessage().contains("closed"), both.getMessage());
        assertEquals(before, backend.enqueuedOps(stream));
        two[1].close();
        stillWorks();
    }

    @Test
    void badConfigurationNamesTheSetting() {
        FlexLinkConfig bad = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=1.5").build();
        FlexLinkException e = assertThrows(FlexLinkException.class, bad::shares);
        assertEquals(Result.INVALID_ARGUMENT, e.result());
        assertTrue(e.getMessage().contains("flexlink.share"), e.getMessage());
        FlexLinkException d = assertThrows(FlexLinkException.class,
                () -> FlexLink.initAll(backend, FlexLinkConfig.builder().build(), 0, 99));
        assertTrue(d.getMessage().contains("devices"), d.getMessage());
    }
}
