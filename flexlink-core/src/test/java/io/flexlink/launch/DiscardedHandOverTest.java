package io.flexlink.launch;

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
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.EventTrace;
import io.flexlink.testing.FailingPrimary;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A split call whose auxiliary part was handed to the enqueue thread and whose primary enqueue then failed: the
 * communicator stays usable, the handed-over part runs anyway and its caller's stream is joined to it, and the next
 * call is joined to its own part, not to the failed one's. The PCIe path's receives are slowed (a perturbation), so a
 * stream joined to the wrong events runs ahead of its results.
 */
class DiscardedHandOverTest {
    private static final int N = 8192;

    @Test
    void aCallThatFailedAfterItsHandOverDoesNotShiftTheJoinsOfTheCallsAfterIt() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.ENQUEUE_THREAD, "on")
                .set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        HostFaults slowPcie = (label, op) -> {
            if (label.startsWith("pcie.recv") && op == HostFaults.Op.COPY) {
                Thread.sleep(2);
            }
            return HostFaults.Action.RUN;
        };
        AtomicInteger failuresLeft = new AtomicInteger(2); // each rank's first primary collective
        try (HostBackend host = new HostBackend(config, slowPcie)) {
            EventTrace traced = new EventTrace(host);
            Communicator[] comms = FlexLink.initAll(new FailingPrimary(traced, failuresLeft), config, 0, 1);
            RuntimeStream[] s = {traced.createStream(0, "user0"), traced.createStream(1, "user1")};
            DeviceMemory[] in = {host.allocate(0, N * 4L), host.allocate(1, N * 4L)};
            DeviceMemory[] out = {host.allocate(0, N * 4L), host.allocate(1, N * 4L)};
            try {
                for (int r = 0; r < 2; r++) {
                    host.upload(in[r].address(), ints(r));
                    host.fill(out[r].address(), N * 4L, (byte) 0xA5);
                }
                for (int r = 0; r < 2; r++) {
                    int rank = r;
                    FlexLinkException e = assertThrows(FlexLinkException.class, () -> comms[rank].allReduce(
                            in[rank].address(), out[rank].address(), N, DataType.INT32, ReduceOp.SUM, s[rank]));
                    assertEquals(Result.UNHANDLED_CUDA_ERROR, e.result());
                }
                for (int r = 0; r < 2; r++) {
                    s[r].synchronize(); // joined to the failed call's PCIe part: it is done, and ran with the peer's
                    host.fill(out[r].address(), N * 4L, (byte) 0xA5);
                }
                for (int r = 0; r < 2; r++) {
                    comms[r].allReduce(in[r].address(), out[r].address(), N, DataType.INT32, ReduceOp.SUM, s[r]);
                }
                ByteBuffer a = ints(0);
                ByteBuffer b = ints(1);
                for (int r = 0; r < 2; r++) {
                    s[r].synchronize();
                    ByteBuffer got = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
                    host.download(got, out[r].address());
                    int wrong = 0;
                    for (int i = 0; i < N; i++) {
                        wrong += got.getInt(4 * i) == a.getInt(4 * i) + b.getInt(4 * i) ? 0 : 1;
                    }
                    assertEquals(0, wrong, "rank " + r + ": elements wrong once its stream was synchronized");
                }
                for (int r = 0; r < 2; r++) {
                    List<Integer> forks = traced.forks(r);
                    assertEquals(2, forks.size(), "rank " + r + ": the failed call's fork and the next one's");
                    int joinedFailed = 0;
                    for (int w : traced.waitsOf("user" + r)) {
                        int named = traced.named(w);
                        if (w > forks.get(0) && w < forks.get(1) && named > forks.get(0)) {
                            joinedFailed++; // the failed call's own path work, joined before the next call
                        }
                        if (w > forks.get(1)) {
                            assertTrue(named > forks.get(1), "rank " + r + ": the next call's stream waits for a record "
                                    + "made before its own fork, " + traced.ops().get(named));
                        }
                    }
                    assertTrue(joinedFailed > 0, "rank " + r + ": the failed call's handed-over part was joined");
                }
            } finally {
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

    private static ByteBuffer ints(int rank) {
        ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < N; i++) {
            b.putInt(4 * i, rank * 100_003 + i * 3 + 1);
        }
        return b;
    }
}
