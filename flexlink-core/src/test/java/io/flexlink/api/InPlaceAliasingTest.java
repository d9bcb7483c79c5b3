package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.api.Test;

/**
 * Found by the API fuzz: {@code send == recv} is in place for AllGather and ReduceScatter at rank 0 only;
 * at any other rank it overlaps the rank's block at the wrong position, gave wrong results, and is now
 * refused like any partial overlap.
 */
class InPlaceAliasingTest {
    @Test
    void sameBufferIsInPlaceOnlyAtRankZeroForGathersAndScatters() {
        FlexLinkConfig config = FlexLinkConfig.builder().build();
        try (HostBackend backend = new HostBackend(config)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1);
            RuntimeStream stream = backend.createStream(1, "user.r1");
            try (DeviceMemory buf = backend.allocate(1, 2 * 64 * 4)) {
                long a = buf.address();
                FlexLinkException e = assertThrows(FlexLinkException.class,
                        () -> comms[1].allGather(a, a, 64, DataType.FLOAT32, stream));
                assertEquals(Result.INVALID_ARGUMENT, e.result());
                assertTrue(e.getMessage().contains("sendbuff"), e.getMessage());
                e = assertThrows(FlexLinkException.class,
                        () -> comms[1].reduceScatter(a, a, 64, DataType.FLOAT32, ReduceOp.SUM, stream));
                assertTrue(e.getMessage().contains("recvbuff"), e.getMessage());
                assertEquals(0, backend.enqueuedOps(stream));
            }
            stream.close();
            for (Communicator c : comms) {
                c.close();
            }
        }
    }
}
