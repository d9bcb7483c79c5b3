package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.MemOps;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RowRuns;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A lane's batching as its stream sees it: flag operations in a row make one batch, flushed before any other
 * operation, and a wait deferred behind the batch ({@link Lane#waitEventAfterBatch}) goes right after it, so
 * the waits added after the deferral join the same batch. Where the call allows it, copies of rows in a row go
 * out as one {@code copyRowRuns} before what follows them.
 */
class LaneTest {
    private HostBackend backend;
    private PinnedMemory flags;
    private RuntimeEvent reduced;
    private final List<String> log = new ArrayList<>();
    private Lane lane;

    @BeforeEach
    void open() {
        backend = new HostBackend(FlexLinkConfig.builder().build());
        flags = backend.allocatePinned(4096);
        reduced = backend.createEvent(0, false);
        lane = new Lane(recording(log));
    }

    @AfterEach
    void close() {
        reduced.close();
        flags.close();
        backend.close();
    }

    /** A stream that only records what it is given: "memOps(n)" with the batch's size, or the method's name. */
    private static RuntimeStream recording(List<String> log) {
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (proxy, m, a) -> {
                    String n = m.getName();
                    if (n.equals("memOps")) {
                        log.add("memOps(" + ((MemOps) a[0]).size() + ")");
                    } else if (n.equals("copyRowRuns")) {
                        log.add("copyRowRuns(" + ((RowRuns) a[0]).size() + ")");
                    } else if (n.equals("waitEvent")) {
                        log.add("waitEvent(" + a[0] + ")");
                    } else if (m.getReturnType() == void.class) {
                        log.add(n);
                    }
                    return null;
                });
    }

    @Test
    void aDeferredWaitGoesBehindTheBatchThatTheLaterWaitsJoin() {
        lane.write(flags, 0, Flags.FULL); // the previous item's ready words
        lane.write(flags, 64, Flags.FULL);
        lane.waitEventAfterBatch(reduced);
        lane.waitAny(flags, 128, Flags.FREE); // the next item's slot waits
        lane.waitAny(flags, 192, Flags.FREE);
        lane.copy(1 << 20, 2 << 20, 4096);
        assertEquals(List.of("memOps(4)", "waitEvent(" + reduced + ")", "copy"), log);
    }

    @Test
    void anImmediateWaitEndsTheBatch() {
        lane.write(flags, 0, Flags.FULL);
        lane.waitEvent(reduced);
        lane.waitAny(flags, 128, Flags.FREE);
        lane.copy(1 << 20, 2 << 20, 4096);
        assertEquals(List.of("memOps(1)", "waitEvent(" + reduced + ")", "memOps(1)", "copy"), log);
    }

    @Test
    void copiesOfRowsInARowGoOutTogetherBeforeTheFlagsThatFollowThem() {
        lane.batchRuns(true);
        lane.waitAny(flags, 0, Flags.FREE); // the slot's waits
        lane.copyRows(1 << 20, 4096, 2 << 20, 8192, 4096, 3); // the consumers after the producer
        lane.copyRows(1 << 21, 4096, 3 << 20, 8192, 4096, 4); // and before it
        assertEquals(List.of("memOps(1)"), log, "the copies are held");
        lane.write(flags, 64, Flags.FULL); // their ready words
        lane.write(flags, 128, Flags.FULL);
        assertEquals(List.of("memOps(1)", "copyRowRuns(2)"), log, "a flag operation sends the held copies first");
        lane.copyRowsFromHost(1 << 20, 4096, flags, 256, 512, 256, 2);
        lane.flush();
        assertEquals(List.of("memOps(1)", "copyRowRuns(2)", "memOps(2)", "copyRowsFromHost"), log,
                "a single held copy goes as itself");
    }

    @Test
    void aDeferredWaitGoesBetweenTheCopiesHeldBeforeItAndThoseAfterIt() {
        lane.batchRuns(true);
        lane.copyRows(1 << 20, 4096, 2 << 20, 8192, 4096, 3);
        lane.copyRows(1 << 21, 4096, 3 << 20, 8192, 4096, 4);
        lane.waitEventAfterBatch(reduced);
        lane.copyRows(1 << 22, 4096, 4 << 20, 8192, 4096, 2);
        lane.record(reduced);
        assertEquals(List.of("copyRowRuns(2)", "waitEvent(" + reduced + ")", "copyRows", "record"), log);
    }

    @Test
    void aCallNotKnownToBeUncapturedSendsEachCopyAtOnce() {
        lane.copyRows(1 << 20, 4096, 2 << 20, 8192, 4096, 3);
        lane.copyRows(1 << 21, 4096, 3 << 20, 8192, 4096, 4);
        assertEquals(List.of("copyRows", "copyRows"), log, "a call not known to be uncaptured: no batch");
        lane.batchRuns(true);
        lane.copyRows(1 << 20, 4096, 2 << 20, 8192, 4096, 3);
        lane.copyRows(1 << 21, 4096, 3 << 20, 8192, 4096, 4);
        lane.batchRuns(false); // the next call is captured: nothing of this one may wait for its flush
        assertEquals(List.of("copyRows", "copyRows", "copyRowRuns(2)"), log);
        lane.batchRuns(true);
        lane.copyRows(1 << 20, 4096, 2 << 20, 8192, 4096, 3);
        lane.discard();
        lane.flush();
        assertEquals(List.of("copyRows", "copyRows", "copyRowRuns(2)"), log, "a failed call's copies are forgotten");
    }

    @Test
    void aSecondDeferralFlushesTheFirstAndDiscardForgetsBoth() {
        RuntimeEvent b = backend.createEvent(0, false);
        lane.write(flags, 0, Flags.FULL);
        lane.waitEventAfterBatch(reduced);
        lane.waitEventAfterBatch(b); // each wait refers to its event's record of now: the first goes out first
        assertEquals(List.of("memOps(1)", "waitEvent(" + reduced + ")"), log);
        lane.waitAny(flags, 128, Flags.FREE);
        lane.discard();
        lane.flush();
        assertEquals(List.of("memOps(1)", "waitEvent(" + reduced + ")"), log, "a discarded lane enqueues nothing");
        b.close();
    }
}
