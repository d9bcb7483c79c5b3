package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The watchdog's decisions on a manual clock: nothing is overdue a nanosecond before the timeout, the
 * call is at the timeout; completed calls are never overdue however long the communicator lives; the
 * report names the collective and the rank whose counters are behind; the shared thread comes and goes
 * with the communicators it watches.
 */
class WatchdogTest {
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private static FlexLinkConfig config(String timeout) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.TIMEOUT, timeout).build();
    }

    /** Flight records go to the log only, unless a test asks for its own files. */
    private static final FlightRecorder LOG_ONLY = new FlightRecorder(() -> "off");

    private static Watchdog manual(Communicator[] comms, AtomicLong clock) {
        return manual(comms, clock, LOG_ONLY);
    }

    private static Watchdog manual(Communicator[] comms, AtomicLong clock, FlightRecorder recorder) {
        Watchdog w = Watchdog.manual(clock::get, recorder);
        for (Communicator c : comms) {
            ((FlexCommunicator) c).useWatchdog(w);
        }
        return w;
    }

    @Test
    void aCallPastTheTimeoutAbortsItsCommunicatorAndNamesTheRankBehind() {
        FlexLinkConfig config = config("1s");
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
            AtomicLong clock = new AtomicLong(5 * SECOND);
            Watchdog w = manual(comms, clock);
            RuntimeStream stream = backend.createStream(0, "user.r0");
            DeviceMemory send = backend.allocate(0, 4096 * 4);
            DeviceMemory recv = backend.allocate(0, 2 * 4096 * 4);
            comms[0].allGather(send, recv, 4096, DataType.INT32, stream); // rank 1 never calls
            w.tick();
            clock.addAndGet(SECOND - 1);
            w.tick();
            assertEquals(Result.SUCCESS, comms[0].getAsyncError(), "one nanosecond before the timeout");
            assertFalse(stream.isIdle());
            clock.addAndGet(1);
            w.tick();
            w.tick(); // rank 1 finds rank 0's abort word in the shared staging area
            assertEquals(Result.REMOTE_ERROR, comms[0].getAsyncError());
            assertEquals(Result.REMOTE_ERROR, comms[1].getAsyncError());
            Bounded.idle(stream, BOUND); // the abort released the caller's stream
            FlexLinkException e = assertThrows(FlexLinkException.class,
                    () -> comms[0].allGather(send, recv, 4096, DataType.INT32, stream));
            assertEquals(Result.REMOTE_ERROR, e.result());
            assertTrue(e.getMessage().contains("ALL_GATHER of 4096 elements (INT32") && e.getMessage().contains("1000 ms")
                    && e.getMessage().contains("waiting for producer rank 1"), e.getMessage());
            assertTrue(comms[0].stats().errorDetail().contains("watchdog"));
            FlexLinkException e1 = assertThrows(FlexLinkException.class,
                    () -> comms[1].allGather(send.address(), recv.address(), 4096, DataType.INT32, stream));
            assertTrue(e1.getMessage().contains("rank 0 aborted"), e1.getMessage());
            assertEquals(0, w.watched(), "both communicators were aborted and freed");
            for (Communicator c : comms) {
                c.close();
            }
            stream.close();
            send.close();
            recv.close();
            assertEquals(0, backend.liveBytes());
        }
    }

    @Test
    void completedCallsAreNeverOverdueHoweverOldTheCommunicator() {
        FlexLinkConfig config = config("1s");
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
            AtomicLong clock = new AtomicLong(0);
            Watchdog w = manual(comms, clock);
            try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                // more calls than the ring of done events, each followed by an hour of idleness
                for (int i = 0; i < 3 * CallWatch.RING; i++) {
                    assertEquals(0, h.run(Collective.values()[i % 5], DataType.FLOAT32, ReduceOp.SUM, 5000, 1,
                            false, i).wrong);
                    clock.addAndGet(3600 * SECOND);
                    w.tick();
                }
            }
            assertEquals(Result.SUCCESS, comms[0].getAsyncError());
            assertEquals(Result.SUCCESS, comms[1].getAsyncError());
            for (Communicator c : comms) {
                c.close();
            }
            assertEquals(0, w.watched());
        }
    }

    @Test
    void aThreadStuckInsideACallIsOverdueToo() {
        try (HostBackend backend = new HostBackend(config("1s"))) {
            CallWatch watch = new CallWatch(backend, 0, SECOND);
            watch.enter(Collective.REDUCE, 7 * SECOND);
            assertNull(watch.overdue(8 * SECOND - 1));
            String late = watch.overdue(8 * SECOND);
            assertNotNull(late);
            assertTrue(late.contains("inside REDUCE") && late.contains("1000 ms"), late);
            watch.exit();
            assertNull(watch.overdue(100 * SECOND));
            watch.close();
        }
    }

    @Test
    void theFlightRecordShowsOnlyCallsItStillHoldsAfterTheRingGrew() {
        try (HostBackend backend = new HostBackend(config("1s"))) {
            CallWatch watch = new CallWatch(backend, 0, SECOND);
            RuntimeStream stream = backend.createStream(0, "user.r0");
            PinnedMemory gate = backend.allocatePinned(64);
            for (int k = 0; k < 2; k++) {
                watch.record(stream, Collective.BROADCAST, 10, DataType.INT8, 0);
            }
            Bounded.idle(stream, BOUND);
            assertNull(watch.overdue(1)); // both seen done: their records may be reused
            stream.waitValue32(gate, 0, 1); // everything after this waits
            for (int k = 0; k <= CallWatch.RING; k++) { // more calls in flight than the ring holds: it doubles
                watch.record(stream, Collective.ALL_REDUCE, 1000 + k, DataType.FLOAT32, 2);
            }
            String record = watch.flightRecord(3, 8, 2 * CallWatch.RING);
            assertTrue(record.startsWith((CallWatch.RING + 3) + " calls recorded, " + (CallWatch.RING + 1) + " not done"),
                    record);
            assertTrue(!record.contains("null") && record.contains("(2 earlier calls not shown)"), record);
            assertTrue(record.contains("       3  ALL_REDUCE      1000 x FLOAT32") && record.contains("running"), record);
            gate.writeCounter(0, 1);
            Bounded.idle(stream, BOUND);
            stream.close();
            gate.close();
            watch.close();
        }
    }

    @Test
    void theSharedThreadComesAndGoesWithTheCommunicators() {
        FlexLinkConfig config = config("30s");
        int before = Bounded.flexlinkThreads().size();
        // communicators another test left open may keep the shared thread alive: then only count threads
        boolean idle = !Bounded.flexlinkThreads().contains("flexlink-watchdog");
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
            assertTrue(Bounded.flexlinkThreads().contains("flexlink-watchdog"), Bounded.flexlinkThreads().toString());
            for (Communicator c : comms) {
                c.close();
            }
        }
        Bounded.threadsBackTo(before, BOUND);
        // the count may be back already while another thread left (a backend's memory reaper): wait for this one
        Bounded.within(BOUND, () -> !idle || !Bounded.flexlinkThreads().contains("flexlink-watchdog"),
                () -> "the watchdog thread is gone with its communicators: " + Bounded.flexlinkThreads());
        // off: no thread at all
        FlexLinkConfig off = FlexLinkConfig.builder().set(FlexLinkConfig.TIMEOUT, "0").build();
        try (HostBackend backend = new HostBackend(off)) {
            Communicator[] comms = FlexLink.initAll(backend, off, 0, 1);
            assertTrue(!idle || !Bounded.flexlinkThreads().contains("flexlink-watchdog"));
            for (Communicator c : comms) {
                c.close();
            }
        }
    }
}
