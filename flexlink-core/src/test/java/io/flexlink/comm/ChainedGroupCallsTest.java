package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.EventTrace;
import io.flexlink.testing.MaxThenSum;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Dependent collectives of one communicator in one group without a primary path (the PCIe path alone here; ranks
 * sharing a GPU on CUDA): each is split, and a later one reads what the earlier one wrote, so each call's paths must
 * fork off the caller's stream only after the call before was joined into it. Checked on the traced order of records
 * and waits, and on the data with the first call's last result held back on one rank.
 */
class ChainedGroupCallsTest {
    private static final int N = 1024; // one chunk per call: the earlier call's results land at its very end

    private static FlexLinkConfig config(boolean enqueueThread) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.ENQUEUE_THREAD, enqueueThread ? "on" : "off").build();
    }

    @Test
    void eachCallForksOnlyAfterTheCallBeforeWasJoined() {
        FlexLinkConfig config = config(false);
        try (HostBackend host = new HostBackend(config)) {
            EventTrace traced = new EventTrace(host);
            assertEquals(0, maxThenSum(traced, host, config), "wrong elements");
            for (int r = 0; r < 2; r++) {
                List<Integer> forks = traced.forks(r);
                assertEquals(2, forks.size(), "rank " + r + ": each call's paths fork off a record of their own");
                assertEquals(java.util.Set.of("user" + r), traced.streamsAt(forks));
                assertTrue(traced.waitsBetween("user" + r, forks.get(0), forks.get(1)) > 0,
                        "rank " + r + ": the caller's stream waited for the first call's joins before the second fork");
            }
        }
    }

    @ParameterizedTest(name = "enqueue thread {0}")
    @ValueSource(booleans = {false, true})
    void theSecondCallReadsTheFirstOnesResultsEvenWhenTheyLandLate(boolean enqueueThread) {
        FlexLinkConfig config = config(enqueueThread);
        AtomicInteger received = new AtomicInteger();
        HostFaults lateResult = (label, op) -> {
            if (label.equals("pcie.recv.r0") && op == HostFaults.Op.COPY && received.incrementAndGet() == 2) {
                Thread.sleep(50); // rank 0 receives the first call's result from rank 1 late (a perturbation only)
            }
            return HostFaults.Action.RUN;
        };
        try (HostBackend host = new HostBackend(config, lateResult)) {
            assertEquals(0, maxThenSum(host, host, config), "wrong elements");
            assertTrue(received.get() >= 4, "both calls went over the PCIe path: " + received.get() + " copies");
        }
    }

    /** One group of two in-place AllReduces per rank, MAX then SUM, on 2 ranks and one stream each; wrong elements. */
    private static long maxThenSum(Backend calls, HostBackend host, FlexLinkConfig config) {
        Communicator[] comms = FlexLink.initAll(calls, config, 0, 1);
        RuntimeStream[] streams = {calls.createStream(0, "user0"), calls.createStream(1, "user1")};
        DeviceMemory[] buf = {host.allocate(0, N * 4L), host.allocate(1, N * 4L)};
        try {
            return MaxThenSum.run(host, comms, streams, streams, buf, N, 11);
        } finally {
            for (Communicator c : comms) {
                c.close();
            }
            for (int r = 0; r < 2; r++) {
                streams[r].close();
                buf[r].close();
            }
        }
    }
}
