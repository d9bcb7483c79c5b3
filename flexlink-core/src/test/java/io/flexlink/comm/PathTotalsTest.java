package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** stats() counts every call per path, and says how many of them were timed (the balancer's only). */
class PathTotalsTest {
    @ParameterizedTest
    @ValueSource(strings = {"auto", "pcie=0.5"})
    void callsBytesAndTimedCallsPerPath(String share) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, share)
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "64K")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        int count = 1 << 18;
        int calls = 40;
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
            RuntimeStream[] streams = new RuntimeStream[2];
            DeviceMemory[] buffers = new DeviceMemory[2];
            for (int r = 0; r < 2; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                buffers[r] = backend.allocate(r, count * 4L);
                backend.fill(buffers[r].address(), count * 4L, (byte) 1);
            }
            for (int k = 0; k < calls; k++) {
                FlexLink.groupStart();
                for (int r = 0; r < 2; r++) {
                    comms[r].allReduce(buffers[r], buffers[r], count, DataType.INT32, ReduceOp.MAX, streams[r]);
                }
                FlexLink.groupEnd();
                for (RuntimeStream s : streams) {
                    s.synchronize(); // every timed call is complete when stats() reads it
                }
            }
            long total = 0;
            for (CommStats.PathTotals t : comms[0].stats().paths()) {
                total += t.bytes();
                assertTrue(t.timedCalls() <= t.calls(), t.toString());
                if (share.equals("auto")) {
                    assertTrue(t.timedCalls() > 0 && t.seconds() > 0, "the balancer times its calls: " + t);
                } else {
                    assertEquals(0, t.timedCalls(), "fixed shares time nothing: " + t);
                    assertEquals(0.0, t.seconds(), t.toString());
                    assertEquals(calls, t.calls(), "every call splits at pcie=0.5: " + t);
                }
            }
            assertEquals((long) calls * count * 4, total, "every byte of every call on some path");
            for (int r = 0; r < 2; r++) {
                comms[r].close();
                streams[r].close();
                buffers[r].close();
            }
        }
    }
}
