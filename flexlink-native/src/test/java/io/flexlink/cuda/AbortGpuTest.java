package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.comm.FlexCommunicator;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.Bounded;
import io.flexlink.testing.CollectiveHarness;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Abort on a GPU: two ranks on GPU 0 over the PCIe path (NCCL refuses two ranks on one device), only
 * rank 0 enqueues its part of an AllGather, so its receive stream waits in {@code cuStreamWaitValue32}
 * for rank 1's first chunk forever, and the caller's stream waits for it. A GPU wait cannot be cancelled:
 * the abort writes the counters past every awaited value and the streams run on (on garbage). Shown
 * here: the caller's stream is released ({@code cudaStreamQuery} succeeds, {@code cudaStreamSynchronize}
 * returns) within a bound, the silent rank learns of the abort from the abort word (REMOTE_ERROR), nothing
 * leaks, and a fresh communicator on the same GPU then runs verified collectives. Skips without CUDA.
 */
@Tag("gpu")
class AbortGpuTest {
    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final long COUNT = 1 << 20; // 4 MB of floats per rank: 16 chunks of 256 KB through 2 slots
    static CudaBackend backend;

    @BeforeAll
    static void open() {
        backend = GpuTests.open();
    }

    @AfterAll
    static void close() {
        if (backend != null) {
            backend.close();
        }
    }

    private static FlexLinkConfig config(String timeout) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie")
                .set(FlexLinkConfig.CHUNK_BYTES, "256K").set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.TIMEOUT, timeout).build();
    }

    /** Rank 0 of a fresh 2-rank communicator on GPU 0 enqueues an AllGather alone; returns the communicators. */
    private static Communicator[] blocked(FlexLinkConfig config, RuntimeStream stream, DeviceMemory send,
                                          DeviceMemory recv) {
        Communicator[] comms = FlexLink.initAll(backend, config, 0, 0);
        assertEquals(List.of("primary(off)", "pcie"), io.flexlink.testing.Paths.names(comms[0]));
        comms[0].allGather(send, recv, COUNT, DataType.FLOAT32, stream);
        // rank 1 never produces: rank 0's receive stream waits in cuStreamWaitValue32, and the caller's
        // stream waits for its join
        assertFalse(stream.isIdle(), "the caller's stream is blocked");
        return comms;
    }

    /** The device still works: a fresh communicator runs verified collectives. */
    private static void deviceStillWorks(FlexLinkConfig config) {
        Communicator[] fresh = FlexLink.initAll(backend, config, 0, 0);
        try (CollectiveHarness h = new CollectiveHarness(backend, fresh)) {
            for (Collective c : List.of(Collective.ALL_GATHER, Collective.ALL_REDUCE)) {
                CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, COUNT + 3, 0, false, 11);
                assertEquals(0, o.wrong, c + " after the abort: " + o);
            }
        } finally {
            for (Communicator c : fresh) {
                c.close();
            }
        }
    }

    @Test
    void abortReleasesAStreamBlockedInCuStreamWaitValue32() {
        long device0 = backend.liveDeviceBytes();
        long pinned0 = backend.livePinnedBytes();
        int streams0 = backend.liveStreams();
        FlexLinkConfig config = config("0");
        RuntimeStream stream = backend.createStream(0, "user.r0");
        DeviceMemory send = backend.allocate(0, COUNT * 4);
        DeviceMemory recv = backend.allocate(0, 2 * COUNT * 4);
        Communicator[] comms = blocked(config, stream, send, recv);
        long t0 = System.nanoTime();
        comms[0].abort();
        long aborted = System.nanoTime();
        Bounded.idle(stream, BOUND); // cudaStreamQuery: success
        stream.synchronize(); // cudaStreamSynchronize returns, and without an error: the stream stays usable
        System.out.printf("abort returned after %.1f ms; the caller's stream was idle %.1f ms after abort()%n",
                (aborted - t0) / 1e6, (System.nanoTime() - t0) / 1e6);
        assertEquals(Result.REMOTE_ERROR, comms[0].getAsyncError());
        assertEquals(Result.REMOTE_ERROR, comms[1].getAsyncError(), "rank 1 reads rank 0's abort word");
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> comms[1].allGather(send.address(),
                recv.address(), COUNT, DataType.FLOAT32, stream));
        assertTrue(e.getMessage().contains("rank 0 aborted"), e.getMessage());
        for (Communicator c : comms) {
            c.close();
        }
        deviceStillWorks(config);
        stream.close();
        send.close();
        recv.close();
        assertEquals(device0, backend.liveDeviceBytes(), "device bytes");
        assertEquals(pinned0, backend.livePinnedBytes(), "pinned bytes");
        assertEquals(streams0, backend.liveStreams(), "streams");
    }

    @Test
    void theWatchdogAbortsAStalledCollectiveAndNamesTheSilentRank() {
        FlexLinkConfig config = config("2s");
        RuntimeStream stream = backend.createStream(0, "user.r0");
        DeviceMemory send = backend.allocate(0, COUNT * 4);
        DeviceMemory recv = backend.allocate(0, 2 * COUNT * 4);
        Communicator[] comms = blocked(config, stream, send, recv);
        Bounded.within(BOUND, () -> comms[0].getAsyncError() == Result.REMOTE_ERROR
                && comms[1].getAsyncError() == Result.REMOTE_ERROR, () -> "errors " + comms[0].getAsyncError()
                + ", " + comms[1].getAsyncError());
        Bounded.idle(stream, BOUND);
        stream.synchronize();
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> comms[0].allGather(send, recv, COUNT, DataType.FLOAT32, stream));
        assertEquals(Result.REMOTE_ERROR, e.result());
        assertTrue(e.getMessage().contains("watchdog") && e.getMessage().contains("producer rank 1"), e.getMessage());
        for (Communicator c : comms) {
            c.close();
        }
        deviceStillWorks(config);
        stream.close();
        send.close();
        recv.close();
    }
}
