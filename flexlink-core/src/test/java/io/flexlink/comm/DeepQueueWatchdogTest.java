package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A queue of calls deeper than the timeout is healthy: every call is enqueued at once (clock 0), and each
 * one then takes 0.6 timeouts of the watchdog's manual clock to run, so that the last finishes after
 * dozens of timeouts. Gates on the callers' streams (a counter wait before each call) let the test release
 * the calls one by one, so the clock is the only time there is. No call may be overdue; a call held at its
 * gate past the timeout is, and the report and the flight recorder say exactly how many calls were
 * enqueued and unfinished, and which ones were done, running and enqueued.
 */
class DeepQueueWatchdogTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long STEP = 600_000_000L; // 0.6 of the 1 s timeout per call
    private static final int CALLS = 3 * CallWatch.RING; // more than the first ring holds: it must grow
    private static final long COUNT = 4096;
    private static final Duration BOUND = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private HostBackend backend;
    private Communicator[] comms;
    private RuntimeStream[] streams;
    private DeviceMemory[] buffers;
    private RuntimeEvent[][] done;
    private PinnedMemory gate;
    private final AtomicLong clock = new AtomicLong(0);
    private Watchdog watchdog;

    @BeforeEach
    void enqueueEveryCallAtOnce() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.37")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TIMEOUT, "1s").build();
        backend = new HostBackend(config);
        comms = FlexLink.initAll(backend, config, 0, 1);
        watchdog = Watchdog.manual(clock::get, new FlightRecorder(() -> dir.resolve("flight").toString()));
        for (Communicator c : comms) {
            ((FlexCommunicator) c).useWatchdog(watchdog);
        }
        gate = backend.allocatePinned(64);
        streams = new RuntimeStream[2];
        buffers = new DeviceMemory[2];
        done = new RuntimeEvent[2][CALLS];
        for (int r = 0; r < 2; r++) {
            streams[r] = backend.createStream(r, "user.r" + r);
            buffers[r] = backend.allocate(r, COUNT * 4);
        }
        for (int k = 0; k < CALLS; k++) {
            for (int r = 0; r < 2; r++) {
                streams[r].waitValue32(gate, 0, k + 1); // call k+1 waits for gate k+1
                comms[r].allReduce(buffers[r], buffers[r], COUNT, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
                done[r][k] = backend.createEvent(r, false);
                streams[r].record(done[r][k]);
            }
        }
    }

    @AfterEach
    void drain() {
        gate.writeCounter(0, Integer.MAX_VALUE); // open every gate: whatever is left runs or is skipped
        for (int r = 0; r < 2; r++) {
            Bounded.idle(streams[r], BOUND);
            comms[r].close();
            streams[r].close();
            buffers[r].close();
            for (RuntimeEvent e : done[r]) {
                e.close();
            }
        }
        gate.close();
        assertEquals(0, watchdog.watched());
        backend.close();
    }

    /** Lets call {@code k} (from 1) run on both ranks after 0.6 timeouts, waits for it, and runs a round. */
    private void runCall(int k) {
        clock.addAndGet(STEP);
        gate.writeCounter(0, k);
        for (int r = 0; r < 2; r++) {
            RuntimeEvent e = done[r][k - 1];
            Bounded.within(BOUND, e::isComplete, () -> "call " + k + " did not complete");
        }
        watchdog.tick();
    }

    @Test
    void aQueueOfCallsThatKeepCompletingIsNeverOverdue() {
        watchdog.tick(); // every call is enqueued: 0 s
        for (int k = 1; k <= CALLS; k++) {
            runCall(k);
            for (Communicator c : comms) {
                int call = k;
                assertEquals(Result.SUCCESS, c.getAsyncError(),
                        () -> "after call " + call + " at " + clock.get() / 1_000_000 + " ms: " + c.stats().errorDetail());
            }
        }
        assertTrue(clock.get() > 50 * SECOND, "the last call finished dozens of timeouts after it was enqueued");
    }

    @Test
    void aCallHeldPastTheTimeoutIsReportedWithTheWholeQueueAndTheFlightRecord() throws Exception {
        watchdog.tick();
        int ran = 40;
        for (int k = 1; k <= ran; k++) {
            runCall(k);
        }
        clock.addAndGet(SECOND - 1);
        watchdog.tick();
        assertEquals(Result.SUCCESS, comms[0].getAsyncError(), "a nanosecond before the timeout");
        clock.addAndGet(1);
        watchdog.tick(); // call 41 has been running (40 done) for the timeout: gate 41 stays shut
        watchdog.tick(); // the peer finds the abort
        for (Communicator c : comms) {
            assertEquals(Result.REMOTE_ERROR, c.getAsyncError());
        }
        // each rank's watchdog may find its own call overdue first, or the other's abort: one of them reports
        String detail = comms[0].stats().errorDetail().contains("has been running") ? comms[0].stats().errorDetail()
                : comms[1].stats().errorDetail();
        int unfinished = CALLS - ran;
        assertTrue(detail.contains("watchdog: ALL_REDUCE of 4096 elements (FLOAT32, call 41; " + unfinished
                + " enqueued and unfinished) has been running for 1000 ms (enqueued 25000 ms ago)"), detail);
        for (int r = 0; r < 2; r++) {
            Path file = dir.resolve("flight-" + ProcessHandle.current().pid() + "-rank" + r + ".txt");
            assertTrue(Files.exists(file), "rank " + r + " wrote its flight record");
            String text = Files.readString(file, StandardCharsets.UTF_8);
            assertTrue(text.startsWith("== FlexLink flight recorder: rank " + r + "/2"), text);
            assertTrue(text.contains(CALLS + " calls recorded, " + unfinished + " not done"), text);
            // the done calls before the running one, the running one, the next enqueued ones, the newest
            assertTrue(text.contains("(32 earlier calls not shown)"), text);
            assertTrue(line(text, 33).matches(".*ALL_REDUCE +4096 x FLOAT32 \\(16 KiB\\) +done +25000 +5800 +5200 *"),
                    line(text, 33));
            assertTrue(line(text, 40).matches(".*done +25000 +1600 +1000 *"), line(text, 40));
            assertTrue(line(text, 41).matches(".*running +25000 +1000 *"), line(text, 41));
            assertTrue(line(text, 42).matches(".*enqueued +25000 *"), line(text, 42));
            assertTrue(line(text, 57).matches(".*enqueued.*"), line(text, 57));
            assertTrue(text.contains("(38 more enqueued)"), text);
            assertTrue(line(text, CALLS).matches(".*enqueued +25000 *"), line(text, CALLS));
            assertEquals("", line(text, 58), "calls between the window and the newest are counted, not listed");
        }
    }

    /** The flight record's line of call {@code seq} (from 1), or "". */
    private static String line(String text, int seq) {
        for (String l : text.split("\n")) {
            if (l.matches(" *" + seq + "  .*")) {
                return l;
            }
        }
        return "";
    }

    @Test
    void theWatchdogIsOnByDefaultWithTenMinutes() {
        String set = System.clearProperty("flexlink.timeout"); // the build sets 120 s for the tests
        try {
            FlexLinkConfig defaults = FlexLinkConfig.builder().environment(Map.of()).build();
            assertEquals(Duration.ofMinutes(10), defaults.timeout());
            try (HostBackend b = new HostBackend(defaults)) {
                Communicator[] two = FlexLink.initAll(b, defaults, 0, 1);
                AtomicLong t = new AtomicLong(0);
                Watchdog w = Watchdog.manual(t::get, new FlightRecorder(() -> "off"));
                for (Communicator c : two) {
                    ((FlexCommunicator) c).useWatchdog(w); // refused when the watchdog is off
                }
                RuntimeStream s = b.createStream(0, "user.r0");
                try (DeviceMemory send = b.allocate(0, COUNT * 4); DeviceMemory recv = b.allocate(0, 2 * COUNT * 4)) {
                    two[0].allGather(send, recv, COUNT, DataType.INT32, s); // rank 1 never calls
                    w.tick();
                    t.set(TimeUnit.MINUTES.toNanos(10) - 1);
                    w.tick();
                    assertEquals(Result.SUCCESS, two[0].getAsyncError());
                    t.set(TimeUnit.MINUTES.toNanos(10));
                    w.tick();
                    assertEquals(Result.REMOTE_ERROR, two[0].getAsyncError());
                    Bounded.idle(s, BOUND);
                    for (Communicator c : two) {
                        c.close();
                    }
                }
                s.close();
            }
        } finally {
            if (set != null) {
                System.setProperty("flexlink.timeout", set);
            }
        }
    }
}
