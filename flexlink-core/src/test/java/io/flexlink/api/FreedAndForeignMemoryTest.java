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
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * On the host backend "device memory" is process memory: a freed allocation or a foreign address handed
 * to a collective, a stream operation or a synchronous copy would crash the JVM when touched. Each is
 * refused with INVALID_ARGUMENT naming the argument, before anything is enqueued; memory freed while work
 * that uses it is still queued stays mapped until that work has run.
 */
class FreedAndForeignMemoryTest {
    /** 1 MiB buffers: large allocations are mappings of their own, unmapped on free (a freed one faults). */
    private static final long N = 1 << 18;
    private static final Duration BOUND = Duration.ofSeconds(20);
    private HostBackend backend;
    private Communicator[] comms;
    private CollectiveHarness harness;
    private RuntimeStream stream;
    private DeviceMemory recv;

    @BeforeEach
    void setUp() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "64K").build();
        backend = new HostBackend(config);
        comms = FlexLink.initAll(backend, config, 0, 1);
        harness = new CollectiveHarness(backend, comms);
        stream = harness.stream(0);
        recv = backend.allocate(0, N * 4);
    }

    @AfterEach
    void tearDown() {
        stillWorks();
        for (Communicator c : comms) {
            c.abort(); // were a bad call accepted, its rank would wait for the other forever: release both
        }
        harness.close();
        recv.close();
        assertEquals(0, backend.liveBytes());
        backend.close();
    }

    private void refused(String argument, String why, Executable call) {
        long before = backend.enqueuedOps(stream);
        FlexLinkException e = assertThrows(FlexLinkException.class, call);
        assertEquals(Result.INVALID_ARGUMENT, e.result(), e.getMessage());
        assertTrue(e.detail().startsWith(argument + ": ") && e.detail().contains(why), e.getMessage());
        assertEquals(before, backend.enqueuedOps(stream), "nothing enqueued");
    }

    /**
     * After a test's refusals the communicator still works. Checked once at the end, not after each refusal:
     * the check allocates, and an allocation may reuse a freed address that a later refusal names.
     */
    private void stillWorks() {
        CollectiveHarness.Outcome o = harness.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 4096, 0, false, 3);
        assertEquals(0, o.wrong, "the communicator still works: " + o);
    }

    @Test
    void aClosedAllocationIsRefusedByTheBufferAndTheAddressOverloads() {
        DeviceMemory freed = backend.allocate(0, N * 4);
        long address = freed.address();
        freed.close();
        Communicator c = comms[0];
        refused("sendbuff", "was freed", () -> c.allReduce(freed, recv, N, DataType.FLOAT32, ReduceOp.SUM, stream));
        refused("recvbuff", "was freed", () -> c.broadcast(recv, freed, N, DataType.FLOAT32, 0, stream));
        refused("sendbuff", "was freed", () -> c.allReduce(address, recv.address(), N, DataType.FLOAT32, ReduceOp.SUM,
                stream));
    }

    @Test
    void aBufferWrappingAnAddressThatIsNotOursIsRefused() {
        Communicator c = comms[0];
        Buffer foreign = Buffer.wrap(0x10000, N * 4, 0);
        refused("sendbuff", "is not memory of this host backend",
                () -> c.allReduce(foreign, recv, N, DataType.FLOAT32, ReduceOp.SUM, stream));
        refused("recvbuff", "is not memory of this host backend",
                () -> c.allGather(recv.address(), 8, 1, DataType.INT8, stream));
        // a wrapper that claims more than its allocation holds: the bytes the call needs run past the end
        Buffer tooLong = Buffer.wrap(recv.address(), 2 * N * 4, 0);
        refused("sendbuff", "runs 4 bytes past the end",
                () -> c.allReduce(tooLong, tooLong, N + 1, DataType.FLOAT32, ReduceOp.SUM, stream));
        // memory of another device, through the address overload (NCCL checks the pointer's device too)
        try (DeviceMemory elsewhere = backend.allocate(1, N * 4)) {
            refused("sendbuff", "lives on device 1, not on device 0",
                    () -> c.allReduce(elsewhere.address(), recv.address(), N, DataType.FLOAT32, ReduceOp.SUM, stream));
        }
    }

    @Test
    void streamOperationsAndSynchronousCopiesCheckTheirMemoryToo() {
        DeviceMemory freed = backend.allocate(0, 4096);
        long gone = freed.address();
        freed.close();
        refused("copy: src", "was freed", () -> stream.copy(recv.address(), gone, 4096));
        refused("copy: dst", "is not memory", () -> stream.copy(0x10000, recv.address(), 4096));
        refused("reduce: b", "was freed",
                () -> stream.reduce(recv.address(), recv.address(), gone, 1024, DataType.FLOAT32, ReduceOp.SUM, 1));
        PinnedMemory closed = backend.allocatePinned(4096);
        closed.close();
        refused("waitValue32", "was closed", () -> stream.waitValue32(closed, 0, 1));
        try (PinnedMemory counters = backend.allocatePinned(64)) {
            refused("writeValue32", "is outside 64 bytes", () -> stream.writeValue32(counters, 64, 1));
            refused("writeValue32", "not 4-byte aligned", () -> stream.writeValue32(counters, 2, 1));
        }
        refused("upload: dst", "was freed", () -> backend.upload(gone, ByteBuffer.allocate(16)));
        refused("download: src", "is not memory", () -> backend.download(ByteBuffer.allocate(16), 0x10000));
        refused("fill: dst", "runs 1 bytes past the end", () -> backend.fill(recv.address(), N * 4 + 1, (byte) 0));
    }

    @Test
    void memoryFreedWhileQueuedWorkStillUsesItStaysMappedUntilThatWorkRan() throws Exception {
        DeviceMemory[] send = new DeviceMemory[2];
        DeviceMemory[] out = new DeviceMemory[2];
        try (PinnedMemory gate = backend.allocatePinned(64)) {
            for (int r = 0; r < 2; r++) {
                send[r] = backend.allocate(r, N * 4);
                out[r] = backend.allocate(r, N * 4);
                harness.stream(r).waitValue32(gate, 0, 1); // the calls run only once the test opens the gate
                comms[r].allReduce(send[r], out[r], N, DataType.FLOAT32, ReduceOp.SUM, harness.stream(r));
            }
            long live = backend.liveBytes();
            for (int r = 0; r < 2; r++) {
                send[r].close(); // while the call that reads and writes them is still queued
                out[r].close();
            }
            assertEquals(live - 4 * N * 4, backend.liveBytes(), "unregistered at once");
            FlexLinkException e = assertThrows(FlexLinkException.class,
                    () -> comms[0].allReduce(send[0], recv, N, DataType.FLOAT32, ReduceOp.SUM, stream));
            assertEquals(Result.INVALID_ARGUMENT, e.result());
            assertTrue(e.getMessage().contains("was freed"), e.getMessage());
            gate.writeCounter(0, 1);
            for (int r = 0; r < 2; r++) {
                Bounded.idle(harness.stream(r), BOUND); // the queued work ran on memory still mapped
                harness.stream(r).synchronize();
            }
        }
    }
}
