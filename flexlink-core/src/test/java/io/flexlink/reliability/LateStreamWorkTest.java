package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.sync.StagingLayout;
import io.flexlink.testing.Bounded;
import io.flexlink.testing.SwitchableFaults;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Work that a stream runs after its communicator was aborted and its teardown gave up waiting: a stream
 * operation held by a fault hook past the abort's bound, then let go. A counter write that lands then
 * must not stay lowered once the path is freed (a peer process's stream could wait on it forever), and
 * the host ring's memory, which its close could not free under the held call, is freed when it ends.
 */
class LateStreamWorkTest {
    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final long COUNT = 8192;
    /** The watchdog's timeout, which is also how long an abort waits for busy streams. */
    private static final String TIMEOUT = "300ms";

    private int threadBaseline;
    private HostBackend host;
    private final SwitchableFaults faults = new SwitchableFaults();
    private final RuntimeStream[] streams = new RuntimeStream[2];
    private final DeviceMemory[] buffers = new DeviceMemory[4];
    private final CountDownLatch held = new CountDownLatch(1);
    private final CountDownLatch letGo = new CountDownLatch(1);

    private static FlexLinkConfig config(String paths) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, paths).set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.TIMEOUT, TIMEOUT).set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    @BeforeEach
    void start() {
        threadBaseline = Bounded.flexlinkThreads().size();
    }

    private void open(FlexLinkConfig config) {
        host = new HostBackend(config, faults);
        for (int r = 0; r < 2; r++) {
            streams[r] = host.createStream(r, "user.r" + r);
            buffers[2 * r] = host.allocate(r, COUNT * 4);
            buffers[2 * r + 1] = host.allocate(r, COUNT * 4);
        }
    }

    /** Holds the first operation of {@code op} on device 0's streams labelled {@code label...} until {@link #letGo}. */
    private void hold(String label, HostFaults.Op op) {
        faults.set(HostFaults.targeting(0, label, op, nth -> {
            if (nth == 1) {
                held.countDown();
                assertTrue(letGo.await(BOUND.toMillis(), TimeUnit.MILLISECONDS), "the test let go");
            }
            return HostFaults.Action.RUN;
        }));
    }

    private void allReduce(Communicator[] comms) throws InterruptedException {
        for (int r = 0; r < 2; r++) {
            comms[r].allReduce(buffers[2 * r], buffers[2 * r + 1], COUNT, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
        }
        assertTrue(held.await(BOUND.toMillis(), TimeUnit.MILLISECONDS), "the operation is held");
    }

    @AfterEach
    void end() {
        letGo.countDown();
        if (host == null) {
            return;
        }
        faults.set(null);
        for (int r = 0; r < 2; r++) {
            Bounded.idle(streams[r], BOUND);
            streams[r].close();
        }
        for (DeviceMemory m : buffers) {
            m.close();
        }
        assertEquals(0, host.liveBytes(), "off-heap bytes left");
        assertEquals(0, host.liveStreams(), "streams left");
        host.close();
        Bounded.threadsBackTo(threadBaseline, BOUND);
    }

    @Test
    void aCounterWriteLandingAfterTheAbortIsReleasedWhenThePathIsFreed() throws Exception {
        FlexLinkConfig config = config("pcie");
        open(config);
        FailingBackend recording = new FailingBackend(host);
        Communicator[] comms = FlexLink.initAll(recording, config, 0, 1);
        assertEquals(1, recording.created.size(), "the pcie staging is the only shared memory");
        PinnedMemory made = recording.created.get(0);
        StagingLayout layout = new StagingLayout(2, 2, 4096);
        try (PinnedMemory staging = host.openShared(made.name(), layout.totalBytes())) { // read after the paths
            // rank 0's first chunk is copied to its slot; the write of its full counter is held
            hold("pcie.send", HostFaults.Op.WRITE);
            allReduce(comms);
            comms[1].abort();
            comms[0].abort(); // releases every counter, waits 300 ms for the held stream, leaves its path busy
            letGo.countDown(); // the write lands now: it lowers a released counter
            // the watchdog's next round finds the stream idle and frees the path
            Bounded.within(BOUND, () -> host.liveStreams() == 2, () -> "rank 0's pcie streams freed: "
                    + host.liveStreams() + " streams");
            List<String> lowered = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                for (int s = 0; s < 2; s++) {
                    for (int j = 0; j < 2; j++) {
                        check(staging, layout.flagOffset(p, s, j), "flag[" + p + "][" + s + "][" + j + "]", lowered);
                    }
                }
            }
            assertEquals(List.of(), lowered, "handshake words not released once the paths are freed");
        }
        for (Communicator c : comms) {
            c.close();
        }
    }

    private static void check(PinnedMemory m, long offset, String name, List<String> lowered) {
        int c = m.readCounter(offset);
        if (c != io.flexlink.sync.Flags.RELEASED) {
            lowered.add(name + "=" + c);
        }
    }

    @Test
    void theHostRingFreesItsMemoryWhenACallHeldPastCloseEnds() throws Exception {
        open(config("primary"));
        long before = host.liveBytes();
        Communicator[] comms = FlexLink.initAll(host, config("primary"), 0, 1);
        hold("user.r0", HostFaults.Op.WAIT); // rank 0's ring call stops on its caller's stream
        allReduce(comms);
        comms[0].abort(); // its close waits 300 ms for the call, then leaves the memory to it
        comms[1].abort();
        assertTrue(host.liveBytes() > before, "the held call still has the ring's memory");
        letGo.countDown(); // the call ends (its wait cancelled by the abort): it frees the memory
        Bounded.within(BOUND, () -> host.liveBytes() == before, () -> "ring memory freed once the call ended: "
                + (host.liveBytes() - before) + " bytes left");
        for (Communicator c : comms) {
            c.close();
        }
    }
}
