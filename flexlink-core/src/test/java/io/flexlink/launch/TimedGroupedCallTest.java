package io.flexlink.launch;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.DeferredPrimary;
import org.junit.jupiter.api.Test;

/**
 * The balancer's timing of a call in a group whose primary transport launches at the group's end (NCCL): the
 * primary path's end is recorded after its work, so its time is that work's. The primary's copies on the callers'
 * streams are slowed to {@link #DELAY_MS} each, so any true time is at least that.
 */
class TimedGroupedCallTest {
    private static final long DELAY_MS = 3;
    private static final int CALLS = 4;

    @Test
    void thePrimaryPathOfAGroupedCallIsTimedFromItsStartToTheEndOfItsWork() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "16K")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        HostFaults slowPrimary = (label, op) -> {
            if (label.startsWith("user") && op == HostFaults.Op.COPY) {
                Thread.sleep(DELAY_MS); // a perturbation: the primary's work takes time of its own
            }
            return HostFaults.Action.RUN;
        };
        try (HostBackend host = new HostBackend(config, slowPrimary)) {
            DeferredPrimary backend = new DeferredPrimary(host);
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
            RuntimeStream[] streams = {host.createStream(0, "user0"), host.createStream(1, "user1")};
            DeviceMemory[] buf = {host.allocate(0, 1 << 20), host.allocate(1, 1 << 20)};
            try {
                for (int i = 0; i < CALLS; i++) {
                    FlexLink.groupStart();
                    try {
                        for (int r = 0; r < 2; r++) {
                            comms[r].allReduce(buf[r].address(), buf[r].address(), 1 << 18, DataType.FLOAT32,
                                    ReduceOp.SUM, streams[r]);
                        }
                    } finally {
                        FlexLink.groupEnd();
                    }
                    for (RuntimeStream s : streams) {
                        s.synchronize();
                    }
                }
                for (Communicator c : comms) {
                    CommStats.PathTotals primary = c.stats().paths().stream().filter(t -> t.path().equals("primary"))
                            .findFirst().orElseThrow();
                    assertTrue(primary.timedCalls() > 0, "the balancer timed calls: " + c.stats().paths());
                    double perCall = primary.seconds() / primary.timedCalls();
                    assertTrue(perCall >= DELAY_MS / 1e3, c + ": the primary path timed at " + perCall * 1e3
                            + " ms per call, less than one of its copies");
                }
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
}
