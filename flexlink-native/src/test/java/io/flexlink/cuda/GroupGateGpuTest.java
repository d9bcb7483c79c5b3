package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeout;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.MemOps;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.PathStreams;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code flexlink.groupGate} on the GPU: a batch's wait until a counter reaches a value
 * ({@code CU_STREAM_WAIT_VALUE_GEQ}) holds the stream until the host writes it, and four ranks of one GPU held in
 * their group still get every element right, call after call.
 */
@Tag("gpu")
class GroupGateGpuTest {
    @Test
    void aBatchedWaitHoldsTheStreamUntilTheCounterReachesIt() {
        try (CudaBackend backend = GpuTests.open(); PinnedMemory words = backend.allocatePinned(128)) {
            RuntimeStream s = backend.createStream(0, "test.held");
            words.writeCounter(0, 2);
            words.writeCounter(64, 0);
            // 2 & 3 != 0: a wait encoded as CUDA's AND wait would pass at once and write within microseconds
            s.memOps(new MemOps().waitAtLeast(words, 0, 3).write(words, 64, 9));
            for (int i = 0; i < 50; i++) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                assertEquals(0, words.readCounter(64), "2 has not reached 3: still held after " + i + " ms");
            }
            assertFalse(s.isIdle());
            words.writeCounter(0, 3);
            long deadline = System.nanoTime() + 10_000_000_000L; // a wait that never lets go cannot be interrupted
            while (!s.isIdle()) {
                assertTrue(System.nanoTime() < deadline, "3 reached 3: the stream still held after 10 s");
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            assertEquals(9, words.readCounter(64));
            s.close();
        }
    }

    /**
     * A CUDA stream's wait cannot be called off: an abort in the middle of a held group must write the gate before it
     * waits for the streams, or the teardown waits out its bound (or for ever). Aborted on the group's thread when
     * rank 3's paths are forked, ranks 0 to 2 enqueued and held.
     */
    @Test
    void anAbortInTheMiddleOfAHeldGroupLetsTheStreamsGo() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.GROUP_GATE, "on").set(FlexLinkConfig.TIMEOUT, "10s").build();
        try (CudaBackend backend = GpuTests.open()) {
            PathStreams traced = new PathStreams(backend, PathStreams.Mode.COUNT);
            Communicator[] comms = FlexLink.initAll(traced, config, new int[4]);
            boolean[] aborted = new boolean[1];
            long[] abortNanos = {-1};
            traced.listen((label, m, a) -> {
                if (label.equals("pcie.send.r3") && m.getName().equals("waitEvent") && !aborted[0]) {
                    aborted[0] = true;
                    long t0 = System.nanoTime();
                    comms[0].abort(); // its frees wait for the device, whose other ranks' streams are held
                    abortNanos[0] = System.nanoTime() - t0;
                }
            });
            // not preemptive: a teardown abandoned on another thread would leave streams in use to the backend's close
            assertTimeout(Duration.ofSeconds(20), () -> {
                CollectiveHarness h = new CollectiveHarness(traced, comms).grouped();
                try {
                    h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 1 << 20, 0, false, 3);
                } catch (io.flexlink.FlexLinkException e) {
                    // the callers' streams report the abort; what counts is that nothing stays held
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
            assertTrue(aborted[0], "the abort came while the group was being launched");
            assertTrue(abortNanos[0] >= 0 && abortNanos[0] < 5_000_000_000L, "the abort took " + abortNanos[0] / 1_000_000
                    + " ms of its 10 s bound: a held stream was never let go");
        }
    }

    @Test
    void fourRanksOfOneGpuHeldInTheirGroupGetEveryElement() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.GROUP_GATE, "on").build();
        try (CudaBackend backend = GpuTests.open()) {
            Communicator[] comms = FlexLink.initAll(backend, config, new int[4]);
            try (CollectiveHarness h = new CollectiveHarness(backend, comms).grouped()) {
                long seed = 1;
                for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.ALL_GATHER,
                        Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL}) {
                    for (int i = 0; i < 3; i++) {
                        CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, (1 << 20) + 7 * i, 0,
                                false, seed++);
                        assertEquals(0, o.wrong, c + " call " + i + ": " + o);
                        assertTrue(o.bytes("pcie") > 0, o.toString());
                    }
                }
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
            }
        }
    }
}
