package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.PathStreams;
import org.junit.jupiter.api.Test;

/**
 * How often a split call asks its paths' streams for failures: a call outside any group is checked once, when it
 * is made (its launch follows under the same lock); a group's calls are checked when made and again at the
 * group's end, which may come much later.
 */
class CallChecksTest {
    private static final int CALLS = 6;

    @Test
    void aCallOutsideAGroupChecksItsLanesOnceAndAGroupedCallTwice() {
        assertEquals(3, checksPerCall(false), "three lanes (send, receive, local), one check");
        assertEquals(6, checksPerCall(true), "three lanes, checked at the call and at the group's end");
    }

    /** knownFailure() reads (one per lane and check) per 1-rank AllReduce split with NCCL's stand-in. */
    private static double checksPerCall(boolean grouped) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie")
                .set(FlexLinkConfig.SHARE, "pcie=0.5").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.TIMEOUT, "0").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (HostBackend host = new HostBackend(config)) {
            PathStreams counting = new PathStreams(host, PathStreams.Mode.COUNT);
            Communicator comm = FlexLink.initAll(counting, config, new int[1])[0];
            try (DeviceMemory buf = host.allocate(0, 4096); RuntimeStream s = host.createStream(0, "user")) {
                for (int i = 0; i <= CALLS; i++) {
                    if (i == 1) {
                        counting.reset(); // the first call set things up
                    }
                    if (grouped) {
                        FlexLink.groupStart();
                    }
                    comm.allReduce(buf.address(), buf.address(), 1024, DataType.FLOAT32, ReduceOp.SUM, s);
                    if (grouped) {
                        FlexLink.groupEnd();
                    }
                    s.synchronize();
                }
                long[] read = counting.byMethod().getOrDefault("knownFailure", new long[2]);
                assertEquals(0, counting.byMethod().getOrDefault("failure", new long[2])[0],
                        "the check polls through pollForDomain and reads knownFailure");
                assertEquals(CALLS, counting.byMethod().get("reduceRows")[0], "the PCIe path took part in every call");
                return (double) read[0] / CALLS;
            } finally {
                comm.close();
            }
        }
    }
}
