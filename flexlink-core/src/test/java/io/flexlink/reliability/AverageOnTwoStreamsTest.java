package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Two floating-point averages of one communicator on two caller streams: the host ring divides its input
 * into a scratch buffer first, and the second call must not overwrite that buffer while the first call,
 * held back on one rank, still reads it.
 */
class AverageOnTwoStreamsTest {
    private static final int N = 4096;
    private static final int RANKS = 3;

    @Test
    void aSecondAverageWaitsForTheFirstToStopReadingItsScaledInput() throws Exception {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        // rank 2's second stream: its first operation is either the wait for the first call (fixed) or,
        // were it not, the division into the shared buffer; the gate opens once that has run
        CountDownLatch secondCallStarted = new CountDownLatch(1);
        AtomicInteger ops = new AtomicInteger();
        HostFaults watch = new HostFaults() {
            @Override
            public Action before(String label, Op op) {
                return Action.RUN;
            }

            @Override
            public Action before(int device, String label, Op op) {
                if (device == 2 && label.equals("b2")) {
                    int n = ops.incrementAndGet();
                    if (op == Op.WAIT_EVENT || n >= 2) {
                        secondCallStarted.countDown();
                    }
                }
                return Action.RUN;
            }
        };
        try (HostBackend backend = new HostBackend(config, watch)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2);
            RuntimeStream[] a = new RuntimeStream[RANKS];
            RuntimeStream[] b = new RuntimeStream[RANKS];
            DeviceMemory[] x = new DeviceMemory[RANKS];
            DeviceMemory[] y = new DeviceMemory[RANKS];
            for (int r = 0; r < RANKS; r++) {
                a[r] = backend.createStream(r, "a" + r);
                b[r] = backend.createStream(r, "b" + r);
                x[r] = fill(backend, r, 3f * (r + 1)); // average 6
                y[r] = fill(backend, r, 300f);         // average 300
            }
            try (PinnedMemory gate = backend.allocatePinned(64)) {
                gate.writeCounter(0, 0);
                a[2].waitValue32(gate, 0, 1); // rank 2's first call is held back
                for (int r = 0; r < RANKS; r++) {
                    comms[r].allReduce(x[r], x[r], N, DataType.FLOAT32, ReduceOp.AVG, a[r]);
                }
                for (int r = 0; r < RANKS; r++) {
                    comms[r].allReduce(y[r], y[r], N, DataType.FLOAT32, ReduceOp.AVG, b[r]);
                }
                assertTrue(secondCallStarted.await(60, TimeUnit.SECONDS), "rank 2's second call started");
                gate.writeCounter(0, 1);
                for (int r = 0; r < RANKS; r++) {
                    a[r].synchronize();
                    b[r].synchronize();
                }
            }
            for (int r = 0; r < RANKS; r++) {
                assertEquals(6f, first(backend, x[r]), "rank " + r + ": the first average");
                assertEquals(300f, first(backend, y[r]), "rank " + r + ": the second average");
                assertEquals(0, wrong(backend, x[r], 6f), "rank " + r + ": elements of the first average");
                comms[r].close();
                a[r].close();
                b[r].close();
                x[r].close();
                y[r].close();
            }
        }
    }

    private static DeviceMemory fill(HostBackend backend, int device, float v) {
        DeviceMemory m = backend.allocate(device, N * 4L);
        ByteBuffer bb = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < N; i++) {
            bb.putFloat(4 * i, v);
        }
        backend.upload(m.address(), bb);
        return m;
    }

    private static float first(HostBackend backend, DeviceMemory m) {
        ByteBuffer bb = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        backend.download(bb, m.address());
        return bb.getFloat(0);
    }

    private static int wrong(HostBackend backend, DeviceMemory m, float want) {
        ByteBuffer bb = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        backend.download(bb, m.address());
        int bad = 0;
        for (int i = 0; i < N; i++) {
            bad += bb.getFloat(4 * i) == want ? 0 : 1;
        }
        return bad;
    }
}
