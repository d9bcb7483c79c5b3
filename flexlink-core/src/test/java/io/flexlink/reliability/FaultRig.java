package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flexlink.Collective;
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
import io.flexlink.testing.Bounded;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.SwitchableFaults;
import java.time.Duration;

/**
 * A fresh host backend with two 2-rank communicators: {@code faulty} on devices 0 and 1 (the target of
 * the fault hooks, which select by device) and {@code healthy} on devices 2 and 3, which must keep
 * working whatever happens to the other. Both split every call between the host ring and the PCIe path
 * (4 KB chunks through 2 slots, so one small AllReduce is several chunks per producer).
 * {@link #close()} checks that nothing leaked: off-heap bytes, streams, FlexLink's threads.
 */
final class FaultRig implements AutoCloseable {
    /** The bound on every wait: far above what any step needs, there only so that a hang fails. */
    static final Duration BOUND = Duration.ofSeconds(10);
    static final long COUNT = 8192;

    final HostBackend backend;
    /** The backend's fault hook, armed by each test. */
    final SwitchableFaults faults = new SwitchableFaults();
    final Communicator[] faulty;
    final Communicator[] healthy;
    final RuntimeStream[] streams = new RuntimeStream[2];
    private final DeviceMemory[] send = new DeviceMemory[2];
    private final DeviceMemory[] recv = new DeviceMemory[2];
    private final CollectiveHarness healthyHarness;
    private final int threadBaseline;

    static FlexLinkConfig config(String timeout) {
        return FlexLinkConfig.builder()
                .set(FlexLinkConfig.PATHS, "primary,pcie")
                .set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.TIMEOUT, timeout)
                .build();
    }

    /** @param timeout the faulty communicator's watchdog timeout */
    FaultRig(String timeout) {
        threadBaseline = Bounded.flexlinkThreads().size();
        backend = new HostBackend(config("60s"), faults);
        faulty = FlexLink.initAll(backend, config(timeout), 0, 1);
        healthy = FlexLink.initAll(backend, config("60s"), 2, 3);
        healthyHarness = new CollectiveHarness(backend, healthy);
        for (int r = 0; r < 2; r++) {
            streams[r] = backend.createStream(r, "user.r" + r);
            send[r] = backend.allocate(r, COUNT * 4);
            recv[r] = backend.allocate(r, COUNT * 4);
        }
    }

    /** Rank {@code r} of the faulty communicator enqueues its part of an AllReduce. */
    void enqueue(int r) {
        faulty[r].allReduce(send[r], recv[r], COUNT, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
    }

    /**
     * Both ranks of the faulty communicator enqueue their parts in one group: both calls are accepted before
     * any of their work runs, so a fault that rank 0 meets at once cannot reach rank 1 before rank 1's call.
     */
    void enqueueBoth() {
        FlexLink.groupStart();
        try {
            enqueue(0);
            enqueue(1);
        } finally {
            FlexLink.groupEnd();
        }
    }

    /** Every rank of the faulty communicator reports an asynchronous error within the bound; returns them. */
    Result[] errorEverywhere() {
        Bounded.within(BOUND, () -> faulty[0].getAsyncError() != Result.SUCCESS
                && faulty[1].getAsyncError() != Result.SUCCESS, () -> "errors: " + faulty[0].getAsyncError()
                + ", " + faulty[1].getAsyncError());
        return new Result[] {faulty[0].getAsyncError(), faulty[1].getAsyncError()};
    }

    /** The next call on rank {@code r} throws the asynchronous error (its result); returns the message. */
    String nextCallThrows(int r, Result expected) {
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> enqueue(r));
        assertEquals(expected, e.result(), e.getMessage());
        assertEquals(expected, faulty[r].stats().asyncError());
        assertNotEquals(null, faulty[r].stats().errorDetail());
        return e.getMessage();
    }

    /** The other communicator still runs a verified collective (with the fault hook still installed). */
    void healthyStillWorks(long seed) {
        CollectiveHarness.Outcome o = healthyHarness.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM,
                COUNT + 77, 0, false, seed);
        assertEquals(0, o.wrong, o.toString());
        assertEquals(Result.SUCCESS, healthy[0].getAsyncError());
        assertEquals(Result.SUCCESS, healthy[1].getAsyncError());
    }

    /** Closes everything and checks that memory, streams and threads are back to where they were. */
    @Override
    public void close() {
        faults.set(null);
        for (Communicator c : faulty) {
            c.close();
        }
        for (Communicator c : healthy) {
            c.close();
        }
        healthyHarness.close();
        for (int r = 0; r < 2; r++) {
            Bounded.idle(streams[r], BOUND);
            streams[r].close();
            send[r].close();
            recv[r].close();
        }
        assertEquals(0, backend.liveBytes(), "off-heap bytes left");
        assertEquals(0, backend.liveStreams(), "streams left");
        backend.close();
        Bounded.threadsBackTo(threadBaseline, BOUND);
    }
}
