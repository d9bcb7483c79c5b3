package io.flexlink.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import io.flexlink.testing.CapturingCallers;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.PathStreams;
import java.util.Map;
import java.util.TreeMap;
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
    void aHeldStreamWaitsUntilItsCounterReachesTheValueAcrossTheWrap() {
        try (HostBackend host = new HostBackend(config(true)); PinnedMemory words = host.allocatePinned(128)) {
            RuntimeStream s = host.createStream(0, "held");
            words.writeCounter(0, Integer.MAX_VALUE);
            words.writeCounter(64, 0);
            MemOps ops = new MemOps().waitAtLeast(words, 0, Integer.MIN_VALUE + 1).write(words, 64, 7);
            s.memOps(ops);
            assertFalse(s.isIdle(), "MAX_VALUE is below MIN_VALUE + 1 across the wrap: still held");
            assertEquals(0, words.readCounter(64));
            words.writeCounter(0, Integer.MIN_VALUE + 1);
            s.synchronize();
            assertEquals(7, words.readCounter(64), "let go once the counter reached the value");
            s.close();
        }
    }
}
