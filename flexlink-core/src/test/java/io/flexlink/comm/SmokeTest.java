package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import org.junit.jupiter.api.Test;

class SmokeTest {
    @Test
    void allReduceFourRanksSplit() {
        FlexLinkConfig config = FlexLinkConfig.builder()
                .set(FlexLinkConfig.SHARE, "pcie=0.25")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .build();
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2, 3);
            try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                for (Collective c : Collective.collectives()) {
                    CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 10_001, 1, false, 42);
                    assertEquals(0, o.wrong, c + ": " + o);
                    org.junit.jupiter.api.Assertions.assertTrue(o.bytes("pcie") > 0 && o.bytes("primary") > 0,
                            c + " split over both paths: " + o);
                    o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 10_001, 2, true, 43);
                    assertEquals(0, o.wrong, c + " in place: " + o);
                }
            }
            for (Communicator c : comms) {
                c.close();
            }
        }
    }
}
