package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.Bounded;
import io.flexlink.testing.SwitchableFaults;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * abort() from another thread releases whatever is blocked in the communicator, on the device and on the
 * host, without the watchdog; errors surface through getAsyncError() alone (NCCL's model) when the
 * watchdog is off; and with it on, a call stuck on the host waiting for its peers is ended too.
 */
class AbortTest {
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final long COUNT = 8192;

    private static FlexLinkConfig.Builder base(String paths, String timeout) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, paths).set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.TUNING_CACHE, "off").set(FlexLinkConfig.TIMEOUT, timeout);
    }

    /** One blocked rank 0 of two: its own streams, buffers; rank 1 never calls. */
    private static final class Lonely implements AutoCloseable {
        final HostBackend backend;
        final SwitchableFaults faults = new SwitchableFaults();
        final Communicator[] comms;
        final RuntimeStream stream;
        final DeviceMemory send;
        final DeviceMemory recv;
        final int threads = Bounded.flexlinkThreads().size();

        Lonely(FlexLinkConfig config) {
            backend = new HostBackend(config, faults);
            comms = FlexLink.initAll(backend, config, 0, 1);
            stream = backend.createStream(0, "user.r0");
            send = backend.allocate(0, COUNT * 4);
            recv = backend.allocate(0, 2 * COUNT * 4);
        }

        void allGather() {
            comms[0].allGather(send, recv, COUNT, DataType.FLOAT32, stream);
        }

        @Override
        public void close() {
            for (Communicator c : comms) {
                c.close();
            }
            Bounded.idle(stream, BOUND);
            stream.close();
            send.close();
            recv.close();
            assertEquals(0, backend.liveBytes());
            assertEquals(0, backend.liveStreams());
            backend.close();
            Bounded.threadsBackTo(threads, BOUND);
        }
    }

    private static void inAnotherThread(Runnable r) throws InterruptedException {
        Thread t = new Thread(r, "test-aborter");
        t.start();
        t.join(BOUND.toMillis());
        assertFalse(t.isAlive(), "abort() returned");
    }

    @Test
    void abortReleasesTheCallersStreamStuckInTheHostRing() throws Exception {
        try (Lonely l = new Lonely(base("primary", "0").build())) {
            l.allGather();
            assertFalse(l.stream.isIdle()); // rank 1 never sends: the ring step on the caller's stream waits
            inAnotherThread(l.comms[0]::abort);
            Bounded.idle(l.stream, BOUND);
            assertEquals(Result.REMOTE_ERROR, assertThrows(FlexLinkException.class, l.stream::synchronize).result());
            assertEquals(Result.REMOTE_ERROR, l.comms[0].getAsyncError());
            assertEquals(Result.REMOTE_ERROR, l.comms[1].getAsyncError(), "the peer sees the ring's abort word");
            assertEquals(Result.INVALID_USAGE, assertThrows(FlexLinkException.class, l::allGather).result());
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> l.comms[1].allGather(l.send.address(),
                    l.recv.address(), COUNT, DataType.FLOAT32, l.stream));
            assertEquals(Result.REMOTE_ERROR, e.result());
            assertTrue(e.getMessage().contains("rank 0 aborted"), e.getMessage());
            l.comms[0].abort(); // idempotent
        }
    }

    @Test
    void abortingTheSilentRankReleasesThePeersPcieStreams() throws Exception {
        try (Lonely l = new Lonely(base("pcie", "0").build())) {
            l.allGather();
            assertFalse(l.stream.isIdle());
            inAnotherThread(l.comms[1]::abort); // the rank that never called aborts: rank 0 must be released
            Bounded.idle(l.stream, BOUND);
            assertEquals(Result.REMOTE_ERROR, l.comms[0].getAsyncError());
            FlexLinkException e = assertThrows(FlexLinkException.class, l::allGather);
            assertTrue(e.getMessage().contains("pcie: rank 1 aborted"), e.getMessage());
        }
    }

    @RepeatedTest(10)
    void withoutTheWatchdogAnErrorReachesThePeersOnceTheFailedRankIsPolled() {
        try (Lonely l = new Lonely(base("pcie", "0").build())) {
            l.faults.set(HostFaults.targeting(1, "pcie.send", HostFaults.Op.COPY, nth -> {
                throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "injected: copy failed");
            }));
            l.allGather();
            RuntimeStream other = l.backend.createStream(1, "user.r1");
            try (DeviceMemory send1 = l.backend.allocate(1, COUNT * 4);
                 DeviceMemory recv1 = l.backend.allocate(1, 2 * COUNT * 4)) {
                l.comms[1].allGather(send1, recv1, COUNT, DataType.FLOAT32, other);
                // NCCL's model: the application polls; the failed rank's poll finds its failed stream and tells
                // the others through the abort word, which releases rank 0 and which its own poll then finds
                Bounded.within(BOUND, () -> l.comms[1].getAsyncError() == Result.UNHANDLED_CUDA_ERROR,
                        () -> "rank 1: " + l.comms[1].getAsyncError());
                Bounded.within(BOUND, () -> l.comms[0].getAsyncError() == Result.REMOTE_ERROR,
                        () -> "rank 0: " + l.comms[0].getAsyncError());
                Bounded.idle(other, BOUND);
            }
            Bounded.idle(l.stream, BOUND);
            Bounded.idle(other, BOUND);
            other.close();
            l.comms[1].abort();
            l.comms[0].abort();
        }
    }

    @Test
    void withoutPollingTheNextCallOfTheFailedRankThrowsAndReleasesThePeers() {
        try (Lonely l = new Lonely(base("pcie", "0").build())) {
            l.faults.set(HostFaults.targeting(1, "pcie.send", HostFaults.Op.COPY, nth -> {
                throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "injected: copy failed");
            }));
            l.allGather();
            RuntimeStream other = l.backend.createStream(1, "user.r1");
            try (DeviceMemory send1 = l.backend.allocate(1, COUNT * 4);
                 DeviceMemory recv1 = l.backend.allocate(1, 2 * COUNT * 4)) {
                l.comms[1].allGather(send1, recv1, COUNT, DataType.FLOAT32, other);
                // rank 1's own work ends (its failed stream skips the rest); rank 0 waits for rank 1's chunks
                Bounded.idle(other, BOUND);
                assertFalse(l.stream.isIdle());
                FlexLinkException e = assertThrows(FlexLinkException.class, () -> l.comms[1].allGather(
                        send1, recv1, COUNT, DataType.FLOAT32, other));
                assertEquals(Result.UNHANDLED_CUDA_ERROR, e.result());
                assertTrue(e.getMessage().contains("injected"), e.getMessage());
            }
            Bounded.idle(l.stream, BOUND); // the failed rank's call told rank 0, whose streams are released
            assertEquals(Result.REMOTE_ERROR, assertThrows(FlexLinkException.class, l::allGather).result());
            other.close();
        }
    }

    /** Rank 0 of a balanced communicator calls three times alone: its third call waits for rank 1's agreement. */
    private static Thread stuckInTheBalancer(Lonely l, AtomicReference<Throwable> ended) {
        Thread t = new Thread(() -> {
            try {
                for (int i = 0; i < 3; i++) {
                    l.comms[0].allReduce(l.send, l.send, COUNT, DataType.FLOAT32, ReduceOp.SUM, l.stream);
                }
            } catch (Throwable e) {
                ended.set(e);
            }
        }, "test-rank0");
        t.start();
        Bounded.within(BOUND, () -> Arrays.stream(t.getStackTrace())
                .anyMatch(f -> f.getClassName().endsWith("SharedBoard")), () -> "rank 0 is not waiting for rank 1");
        return t;
    }

    @Test
    void abortEndsACallWaitingOnTheHostForItsPeers() throws Exception {
        FlexLinkConfig config = base("primary,pcie", "0").set(FlexLinkConfig.BALANCE_WINDOW, "1").build();
        try (Lonely l = new Lonely(config)) {
            AtomicReference<Throwable> ended = new AtomicReference<>();
            Thread t = stuckInTheBalancer(l, ended);
            // the call holds the communicator; getAsyncError never waits for it
            assertTimeoutPreemptively(BOUND, () -> assertEquals(Result.SUCCESS, l.comms[0].getAsyncError()));
            inAnotherThread(l.comms[0]::abort);
            t.join(BOUND.toMillis());
            assertFalse(t.isAlive());
            FlexLinkException e = (FlexLinkException) ended.get();
            assertNotNull(e);
            assertEquals(Result.REMOTE_ERROR, e.result());
            assertTrue(e.getMessage().contains("balance board"), e.getMessage());
        }
    }

    @RepeatedTest(10)
    void theWatchdogEndsACallStuckOnTheHost() throws Exception {
        FlexLinkConfig config = base("primary,pcie", "100ms").set(FlexLinkConfig.BALANCE_WINDOW, "1").build();
        try (Lonely l = new Lonely(config)) {
            AtomicReference<Throwable> ended = new AtomicReference<>();
            Thread t = stuckInTheBalancer(l, ended);
            t.join(BOUND.toMillis());
            assertFalse(t.isAlive());
            assertEquals(Result.REMOTE_ERROR, ((FlexLinkException) ended.get()).result());
            // the watchdog records the error right after the call gave the communicator up
            Bounded.within(BOUND, () -> l.comms[0].getAsyncError() == Result.REMOTE_ERROR, () -> "no error recorded");
            assertTrue(l.comms[0].stats().errorDetail().contains("inside ALL_REDUCE"),
                    l.comms[0].stats().errorDetail());
            Bounded.within(BOUND, () -> l.comms[1].getAsyncError() == Result.REMOTE_ERROR, () -> "rank 1 not told");
            Bounded.idle(l.stream, BOUND);
        }
    }
}
