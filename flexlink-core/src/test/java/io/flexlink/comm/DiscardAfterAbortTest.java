package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.PreMulSum;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.FailingPrimary;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A group whose primary transport fails at its end after one member was aborted (by another thread, or here by the
 * failing end itself): the group's calls are discarded, and the aborted member's discard must not reach into the parts
 * its teardown closed (a PreMulSum call's staged input, here). The group's failure is the transport's, with nothing
 * added to it.
 */
class DiscardAfterAbortTest {
    private static final int N = 4096;

    @Test
    void aMemberAbortedBeforeTheGroupFailedIsDiscardedWithoutTouchingWhatItsTeardownClosed() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie")
                .set(FlexLinkConfig.SHARE, "pcie=0.5").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (HostBackend host = new HostBackend(config)) {
            Communicator[] comms = new Communicator[2];
            AtomicInteger endFailures = new AtomicInteger();
            FailingPrimary failing = new FailingPrimary(host, new AtomicInteger(), endFailures, () -> comms[0].abort());
            System.arraycopy(FlexLink.initAll(failing, config, 0, 1), 0, comms, 0, 2);
            RuntimeStream[] s = {host.createStream(0, "user0"), host.createStream(1, "user1")};
            DeviceMemory[] in = {host.allocate(0, N * 4L), host.allocate(1, N * 4L)};
            DeviceMemory[] out = {host.allocate(0, N * 4L), host.allocate(1, N * 4L)};
            PreMulSum doubled = comms[0].createPreMulSum(2.0, DataType.FLOAT32);
            try {
                endFailures.set(1);
                FlexLink.groupStart();
                comms[0].allReduce(in[0].address(), out[0].address(), N, DataType.FLOAT32, doubled, s[0]);
                comms[1].allReduce(in[1].address(), out[1].address(), N, DataType.FLOAT32, ReduceOp.SUM, s[1]);
                FlexLinkException e = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
                assertEquals(Result.UNHANDLED_CUDA_ERROR, e.result(), e.getMessage());
                assertTrue(e.getMessage().contains("refused (injected)"), e.getMessage());
                assertEquals(0, endFailures.get(), "the transport's end failed once");
                assertEquals(0, e.getSuppressed().length, "what the discard of the group's calls threw besides: "
                        + Arrays.toString(e.getSuppressed()));
                assertEquals(Result.INVALID_USAGE, assertThrows(FlexLinkException.class, () -> comms[0].allReduce(
                        in[0].address(), out[0].address(), N, DataType.FLOAT32, ReduceOp.SUM, s[0])).result(),
                        "rank 0 is aborted");
            } finally {
                doubled.close();
                for (Communicator c : comms) {
                    c.close();
                }
                for (int r = 0; r < 2; r++) {
                    s[r].close();
                    in[r].close();
                    out[r].close();
                }
            }
        }
    }
}
