package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A group is atomic, as NCCL's: when one call of it fails, its end launches nothing of it (no stream is left
 * waiting for a peer's part that never comes), reports that call's error, and every communicator stays usable.
 */
class GroupAtomicityTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({"primary,pcie", "pcie", "primary"})
    void aFailedCallCancelsTheWholeGroup(String paths) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, paths)
                .set(FlexLinkConfig.SHARE, paths.contains(",") ? "pcie=0.5" : "auto")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
            RuntimeStream[] streams = {backend.createStream(0, "user.r0"), backend.createStream(1, "user.r1")};
            int count = 10_000;
            DeviceMemory[] buf = {backend.allocate(0, count * 4L), backend.allocate(1, count * 4L)};
            for (DeviceMemory b : buf) {
                backend.fill(b.address(), count * 4L, (byte) 1);
            }
            FlexLink.groupStart();
            comms[0].allReduce(buf[0], buf[0], count, DataType.INT32, ReduceOp.SUM, streams[0]);
            FlexLinkException bad = assertThrows(FlexLinkException.class,
                    () -> comms[1].allReduce(buf[1], buf[1], -1, DataType.INT32, ReduceOp.SUM, streams[1]));
            assertEquals(Result.INVALID_ARGUMENT, bad.result());
            FlexLinkException end = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
            assertEquals(Result.INVALID_ARGUMENT, end.result());
            assertTrue(end.getMessage().contains("nothing of it was launched") && end.getMessage().contains("count"),
                    end.getMessage());
            assertFalse(Groups.active(), "the thread left the group");
            Bounded.idle(streams[0], Duration.ofSeconds(10)); // nothing of rank 0's call was enqueued
            assertEquals(0x01010101, first(backend, buf[0]), "rank 0's buffer untouched");
            // both communicators are still usable: the same group without the bad call is right
            FlexLink.groupStart();
            for (int r = 0; r < 2; r++) {
                comms[r].allReduce(buf[r], buf[r], count, DataType.INT32, ReduceOp.SUM, streams[r]);
            }
            FlexLink.groupEnd();
            for (int r = 0; r < 2; r++) {
                streams[r].synchronize();
                assertEquals(2 * 0x01010101, first(backend, buf[r]));
                assertEquals(Result.SUCCESS, comms[r].getAsyncError());
                comms[r].close();
                streams[r].close();
                buf[r].close();
            }
        }
    }

    /**
     * A layer above FlexLink that refuses a call by its own checks (the NCCL facade) cancels the group through
     * {@link FlexLink#groupFailed}: the end launches nothing and throws the first cause; outside a group it does
     * nothing; a null cause is an argument's error.
     */
    @Test
    void aLayerAboveCancelsTheGroupWithItsOwnCause() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0);
            RuntimeStream stream = backend.createStream(0, "user.r0");
            DeviceMemory buf = backend.allocate(0, 4096);
            backend.fill(buf.address(), 4096, (byte) 1);
            FlexLink.groupFailed(new FlexLinkException(Result.INVALID_ARGUMENT, "outside a group: ignored"));
            FlexLink.groupStart();
            comms[0].allReduce(buf, buf, 1024, DataType.INT32, ReduceOp.SUM, stream);
            FlexLink.groupFailed(new FlexLinkException(Result.INVALID_ARGUMENT, "datatype: 99 (the layer's own check)"));
            FlexLink.groupFailed(new FlexLinkException(Result.INTERNAL_ERROR, "a later one"));
            FlexLinkException end = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
            assertEquals(Result.INVALID_ARGUMENT, end.result());
            assertTrue(end.getMessage().contains("datatype: 99"), end.getMessage());
            assertFalse(Groups.active());
            Bounded.idle(stream, Duration.ofSeconds(10));
            assertEquals(0x01010101, first(backend, buf), "nothing of the group ran");
            assertEquals(Result.INVALID_ARGUMENT, assertThrows(FlexLinkException.class,
                    () -> FlexLink.groupFailed(null)).result());
            comms[0].allReduce(buf, buf, 1024, DataType.INT32, ReduceOp.SUM, stream); // still usable
            stream.synchronize();
            assertEquals(0x01010101, first(backend, buf), "one rank's sum is its own");
            comms[0].close();
            stream.close();
            buf.close();
        }
    }

    private static int first(HostBackend backend, DeviceMemory m) {
        ByteBuffer b = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
        backend.download(b, m.address());
        return b.getInt(0);
    }

    /**
     * Three ranks of a balanced communicator; ranks 0 and 1 call, rank 2 never does, so rank 1 waits at a
     * decision point for rank 2's host; rank 0 aborts: rank 1's wait ends within milliseconds (REMOTE_ERROR,
     * naming rank 0), not at the rendezvous timeout, and its getAsyncError says so.
     */
    @ParameterizedTest(name = "repetition {0}")
    @CsvSource({"1", "2", "3"})
    void aPeersAbortEndsAWaitAtADecisionPoint(int repetition) throws Exception {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie")
                .set(FlexLinkConfig.BALANCE_WINDOW, "1").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.INIT_TIMEOUT, "120s").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2);
            RuntimeStream[] streams = new RuntimeStream[3];
            DeviceMemory[] buf = new DeviceMemory[3];
            for (int r = 0; r < 3; r++) {
                streams[r] = backend.createStream(r, "user.r" + r);
                buf[r] = backend.allocate(r, 8L << 20);
            }
            AtomicLong released = new AtomicLong();
            Thread[] callers = new Thread[2];
            FlexLinkException[] ended = new FlexLinkException[2];
            for (int r = 0; r < 2; r++) {
                int rank = r;
                callers[r] = new Thread(() -> {
                    try {
                        for (int i = 0; i < 4; i++) {
                            comms[rank].allReduce(buf[rank], buf[rank], 2 << 20, DataType.FLOAT32, ReduceOp.SUM,
                                    streams[rank]);
                        }
                    } catch (FlexLinkException e) {
                        ended[rank] = e;
                        released.compareAndSet(0, System.nanoTime());
                    }
                }, "rank" + r);
                callers[r].start();
            }
            Bounded.within(Duration.ofSeconds(20), () -> java.util.Arrays.stream(callers[1].getStackTrace())
                    .anyMatch(f -> f.getClassName().endsWith("SharedBoard")), () -> "rank 1 is not waiting for rank 2");
            long abortedAt = System.nanoTime();
            comms[0].abort();
            callers[1].join(20_000);
            assertFalse(callers[1].isAlive(), "rank 1 released");
            long millis = (System.nanoTime() - abortedAt) / 1_000_000;
            assertTrue(millis < 5_000, "released after " + millis + " ms");
            assertEquals(Result.REMOTE_ERROR, ended[1].result());
            assertTrue(ended[1].getMessage().contains("rank 0 aborted"), ended[1].getMessage());
            assertEquals(Result.REMOTE_ERROR, comms[1].getAsyncError());
            System.out.println("abort to release of rank 1's decision-point wait: " + millis + " ms");
            callers[0].join(20_000);
            for (int r = 0; r < 3; r++) {
                comms[r].abort();
                comms[r].close();
                streams[r].close();
                buf[r].close();
            }
        }
    }
}
