package io.flexlink.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.MemOps;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.CapturingCallers;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.DeviceWideFrees;
import io.flexlink.testing.PathStreams;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@code flexlink.groupGate}: in a group of several communicators, each split call's path streams first wait for a
 * counter in host memory that the group's end writes once everything is enqueued; a call alone, a captured call and
 * a group with the setting off are not held; and a held stream really waits for its counter, wrap-safe.
 */
class GroupGateTest {
    private static FlexLinkConfig config(boolean gate) {
        return config(gate, false);
    }

    private static FlexLinkConfig config(boolean gate, boolean enqueueThread) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "64K").set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.TUNING_CACHE, "off").set(FlexLinkConfig.GROUP_GATE, gate ? "on" : "off")
                .set(FlexLinkConfig.ENQUEUE_THREAD, enqueueThread ? "on" : "off").build();
    }

    /**
     * Per path stream of the given run (4 ranks of device 0, an AllReduce), the first operation of its first flag
     * batch of the run: "held(value)" for a wait until a counter reaches a value, else "free".
     */
    private static Map<String, String> firstWaits(boolean gate, boolean grouped, boolean captured) {
        return firstWaits(config(gate), grouped, captured);
    }

    private static Map<String, String> firstWaits(FlexLinkConfig config, boolean grouped, boolean captured) {
        Map<String, String> first = new TreeMap<>();
        try (HostBackend host = new HostBackend(config)) {
            Backend callers = captured ? new CapturingCallers(host) : host;
            PathStreams traced = new PathStreams(callers, PathStreams.Mode.COUNT);
            traced.listen((label, m, a) -> {
                if (m.getName().equals("memOps")) {
                    MemOps ops = (MemOps) a[0];
                    synchronized (first) {
                        first.putIfAbsent(label, ops.kind(0) == MemOps.WAIT_AT_LEAST ? "held(" + ops.value(0) + ")"
                                : "free");
                    }
                }
            });
            Communicator[] comms = FlexLink.initAll(traced, config, new int[4]);
            try (CollectiveHarness h = new CollectiveHarness(traced, comms)) {
                if (grouped) {
                    h.grouped();
                }
                CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 50_000, 0,
                        false, 5);
                assertEquals(0, o.wrong, o.toString());
                assertTrue(o.bytes("pcie") > 0, o.toString());
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
            }
        }
        return first;
    }

    @Test
    void aGroupOfSeveralRanksHoldsEveryPathStreamUntilItsEnd() {
        Map<String, String> first = firstWaits(true, true, false);
        assertEquals(8, first.size(), "a send and a receive stream per rank: " + first);
        first.forEach((stream, op) -> assertEquals("held(1)", op, stream + ": the first call of its communicator"));
    }

    @Test
    void callsHandedToTheEnqueueThreadsAreHeldToo() {
        Map<String, String> first = firstWaits(config(true, true), true, false);
        assertEquals(8, first.size(), first.toString());
        first.forEach((stream, op) -> assertEquals("held(1)", op, stream + ", enqueued by its communicator's thread"));
    }

    @Test
    void aCallAloneACapturedCallAndAGroupWithTheGateOffAreNotHeld() {
        assertFalse(firstWaits(true, false, false).containsValue("held(1)"), "a call outside a group");
        assertFalse(firstWaits(false, true, false).containsValue("held(1)"), "flexlink.groupGate=off");
        Map<String, String> captured = firstWaits(true, true, true);
        assertEquals(8, captured.size(), captured.toString());
        assertFalse(captured.containsValue("held(1)"), "a replay has no group end to let it go: " + captured);
    }

    @Test
    void nothingOfAHeldCallRunsBeforeTheGroupHasEndedAndTheNextGroupWaitsForItsOwnValue() {
        FlexLinkConfig config = config(true);
        AtomicLong copiesRun = new AtomicLong();
        List<Long> runWhileEnqueueing = new ArrayList<>();
        Map<String, List<Integer>> held = new TreeMap<>();
        boolean[] firstGroup = {true};
        HostFaults countCopies = (label, op) -> {
            if (label.startsWith("pcie") && op == HostFaults.Op.COPY) {
                copiesRun.incrementAndGet();
            }
            return HostFaults.Action.RUN;
        };
        try (HostBackend host = new HostBackend(config, countCopies)) {
            PathStreams traced = new PathStreams(host, PathStreams.Mode.COUNT);
            traced.listen((label, m, a) -> {
                if (firstGroup[0] && label.endsWith(".r3") && m.getReturnType() == void.class
                        && !m.getName().equals("synchronize")) {
                    runWhileEnqueueing.add(copiesRun.get()); // the last rank is enqueued last: all others are held
                }
                if (m.getName().equals("memOps") && ((MemOps) a[0]).kind(0) == MemOps.WAIT_AT_LEAST) {
                    held.computeIfAbsent(label, k -> new ArrayList<>()).add(((MemOps) a[0]).value(0));
                }
            });
            Communicator[] comms = FlexLink.initAll(traced, config, new int[4]);
            try (CollectiveHarness h = new CollectiveHarness(traced, comms).grouped()) {
                for (int i = 0; i < 2; i++) {
                    CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM,
                            50_000, 0, false, 9 + i);
                    assertEquals(0, o.wrong, o.toString());
                    firstGroup[0] = false;
                }
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
            }
        }
        assertTrue(copiesRun.get() > 0, "the path ran");
        assertFalse(runWhileEnqueueing.isEmpty());
        assertTrue(runWhileEnqueueing.stream().allMatch(n -> n == 0), "no path copy ran while rank 3 was still being "
                + "enqueued (first group): " + runWhileEnqueueing);
        assertEquals(8, held.size(), held.toString());
        held.forEach((stream, values) -> assertEquals(List.of(1, 2), values, stream + ": a counter per communicator, "
                + "rising group by group"));
    }

    @Test
    void anAbortOnTheGroupsThreadInTheMiddleOfAHeldGroupLetsEveryHeldStreamGo() {
        abortInTheMiddleOfAHeldGroup(false);
    }

    @Test
    void anAbortOnAnotherThreadWhileTheGroupsThreadWaitsLetsEveryHeldStreamGo() {
        abortInTheMiddleOfAHeldGroup(true);
    }

    /**
     * Rank 0 (or 1, from another thread that the group's thread waits for) is aborted while rank 3's part of a
     * held group is enqueued. The frees wait for the device's busy streams as CUDA's do ({@link DeviceWideFrees}),
     * among them the other ranks' held streams, whose gates the group's thread would write only after it got past
     * the abort: unless the teardown lets every held call go, it waits its whole bound (10 s here).
     */
    private static void abortInTheMiddleOfAHeldGroup(boolean fromAnotherThread) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "64K")
                .set(FlexLinkConfig.TUNING_CACHE, "off").set(FlexLinkConfig.GROUP_GATE, "on")
                .set(FlexLinkConfig.TIMEOUT, "60s").build();
        try (HostBackend host = new HostBackend(config)) {
            PathStreams traced = new PathStreams(host, PathStreams.Mode.COUNT);
            DeviceWideFrees device = new DeviceWideFrees(traced);
            Communicator[] comms = FlexLink.initAll(device, config, new int[4]);
            long[] abortNanos = {-1};
            traced.listen((label, m, a) -> {
                if (label.equals("pcie.send.r3") && m.getName().equals("waitEvent") && abortNanos[0] < 0) {
                    long t0 = System.nanoTime(); // rank 3's fork: the group's last phase, ranks 0 to 2 enqueued and held
                    if (fromAnotherThread) {
                        Thread aborter = new Thread(comms[1]::abort, "aborter");
                        aborter.start();
                        join(aborter);
                    } else {
                        comms[0].abort();
                    }
                    abortNanos[0] = System.nanoTime() - t0;
                }
            });
            assertTimeoutPreemptively(Duration.ofSeconds(8), () -> {
                CollectiveHarness h = new CollectiveHarness(device, comms).grouped();
                try {
                    h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 50_000, 0, false, 3);
                } catch (io.flexlink.FlexLinkException e) {
                    // the callers' streams report the abort; what counts here is that nothing waited 10 s
                }
                for (Communicator c : comms) {
                    c.abort();
                    c.close();
                }
                try {
                    h.close();
                } catch (io.flexlink.FlexLinkException e) {
                    // the same failure, from the callers' streams
                }
            });
            assertTrue(abortNanos[0] >= 0, "the abort came while the group was being launched");
            assertTrue(abortNanos[0] < TimeUnit.SECONDS.toNanos(5), "the abort waited " + abortNanos[0] / 1_000_000
                    + " ms of its 10 s bound: a held stream was never let go");
        }
    }

    private static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void aHeldStreamWaitsUntilItsCounterReachesTheValueAcrossTheWrap() {
        CountDownLatch started = new CountDownLatch(1);
        HostFaults seeWait = (label, op) -> {
            if (label.equals("held")) { // the batch, about to run (a batch with a write counts as a write)
                started.countDown();
            }
            return HostFaults.Action.RUN;
        };
        try (HostBackend host = new HostBackend(config(true), seeWait); PinnedMemory words = host.allocatePinned(128)) {
            RuntimeStream s = host.createStream(0, "held");
            words.writeCounter(0, Integer.MAX_VALUE);
            words.writeCounter(64, 0);
            MemOps ops = new MemOps().waitAtLeast(words, 0, Integer.MIN_VALUE + 1).write(words, 64, 7);
            s.memOps(ops);
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> started.await());
            for (int i = 0; i < 20; i++) { // MAX_VALUE is below MIN_VALUE + 1 across the wrap: it stays held
                LockSupport.parkNanos(1_000_000);
                assertEquals(0, words.readCounter(64), "still held after " + i + " ms");
            }
            assertFalse(s.isIdle());
            words.writeCounter(0, Integer.MIN_VALUE + 1);
            s.synchronize();
            assertEquals(7, words.readCounter(64), "let go once the counter reached the value");
            s.close();
        }
    }
}
