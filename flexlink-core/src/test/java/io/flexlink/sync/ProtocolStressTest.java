package io.flexlink.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The staging protocol under shuffled timing: many more chunks than slots, random delays before copies,
 * counter writes and waits on every stream, 1200 consecutive collectives of all kinds, every element of
 * every one checked. A lost wake-up, a slot reused too early or a counter compared with == instead of ≥
 * shows up here as a hang (caught by the timeout) or a wrong element.
 */
class ProtocolStressTest {
    /** Both paths, {@code share} on the PCIe path, 4 KB chunks through 2 slots, every size split. */
    private static FlexLinkConfig config(String share) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, share)
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").build();
    }

    /**
     * A pause of up to 30 µs before one stream operation in four, seeded per thread: before copies, writes
     * and waits only ({@code dataOpsOnly}), or before every operation.
     */
    private static HostFaults randomDelays(boolean dataOpsOnly) {
        ThreadLocal<SplittableRandom> random = ThreadLocal.withInitial(
                () -> new SplittableRandom(Thread.currentThread().getName().hashCode()));
        return (stream, op) -> {
            if (!dataOpsOnly || op == HostFaults.Op.COPY || op == HostFaults.Op.WRITE || op == HostFaults.Op.WAIT) {
                SplittableRandom r = random.get();
                if (r.nextInt(4) == 0) {
                    LockSupport.parkNanos(r.nextInt(30_000));
                }
            }
            return HostFaults.Action.RUN;
        };
    }

    @Test
    void thousandCollectivesUnderRandomDelays() {
        FlexLinkConfig config = config("pcie=0.6");
        HostFaults delays = randomDelays(true);
        try (HostBackend backend = new HostBackend(config, delays)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2);
            Collective[] kinds = Collective.collectives().toArray(new Collective[0]);
            assertTimeoutPreemptively(Duration.ofMinutes(5), () -> {
                try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                    for (int i = 0; i < 1200; i++) {
                        Collective c = kinds[i % kinds.length];
                        // 4K chunks hold 1024 int32: the PCIe share of 20-30K elements is 12-18 chunks per
                        // producer through 2 slots
                        long count = 20_000 + (i * 7919L) % 10_000;
                        CollectiveHarness.Outcome o = h.run(c, DataType.INT32, ReduceOp.SUM, count, i % 3,
                                i % 2 == 0, i);
                        assertEquals(0, o.wrong, "collective " + i + " " + c + ": " + o);
                        org.junit.jupiter.api.Assertions.assertTrue(o.bytes("pcie") > 0 && o.bytes("primary") > 0,
                                "collective " + i + " was split over both paths: " + o);
                    }
                }
            });
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    /**
     * Collectives back to back with no synchronization between them, under the same random delays: a
     * call's counters start where the previous call's left off while that call may still be running on
     * the streams. 300 in-place AllReduces of seeded random int32 over 3 ranks: each multiplies the sum
     * by 3, so the result is known in closed form (wrapping like the type).
     */
    @Test
    void pipelinedCollectivesUnderRandomDelays() {
        int n = 3;
        int count = 25_000; // the PCIe share spans 15 chunks of 4K per producer through 2 slots
        int calls = 300;
        FlexLinkConfig config = config("pcie=0.6");
        HostFaults delays = randomDelays(false);
        try (HostBackend backend = new HostBackend(config, delays)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2);
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] buffers = new DeviceMemory[n];
            int[] sum = new int[count];
            SplittableRandom data = new SplittableRandom(2026);
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                buffers[r] = backend.allocate(r, count * 4L);
                ByteBuffer b = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
                for (int i = 0; i < count; i++) {
                    int v = data.nextInt();
                    sum[i] += v;
                    b.putInt(4 * i, v);
                }
                backend.upload(buffers[r].address(), b);
            }
            int factor = 1;
            for (int k = 1; k < calls; k++) {
                factor *= n;
            }
            int f = factor;
            assertTimeoutPreemptively(Duration.ofMinutes(5), () -> {
                for (int k = 0; k < calls; k++) {
                    for (int r = 0; r < n; r++) {
                        comms[r].allReduce(buffers[r], buffers[r], count, DataType.INT32, ReduceOp.SUM, streams[r]);
                    }
                }
                for (RuntimeStream s : streams) {
                    s.synchronize();
                }
            });
            for (int r = 0; r < n; r++) {
                ByteBuffer b = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
                backend.download(b, buffers[r].address());
                for (int i = 0; i < count; i++) {
                    assertEquals(sum[i] * f, b.getInt(4 * i), "rank " + r + " element " + i);
                }
                long[] carried = io.flexlink.testing.Paths.bytes(comms[r]);
                long pcie = (long) Math.floor(count * 0.6 / 64) * 64 * 4;
                assertEquals(List.of("primary", "pcie"), io.flexlink.testing.Paths.names(comms[r]));
                assertEquals((long) calls * pcie, carried[1], "rank " + r + ": bytes on the pcie path");
                assertEquals((long) calls * (count * 4L - pcie), carried[0], "rank " + r + ": bytes on the primary");
                comms[r].close();
                streams[r].close();
                buffers[r].close();
            }
        }
    }

    /**
     * 300 AlltoAll and AllReduce calls back to back, never synchronized between calls, under random delays:
     * each round is an in-place AllReduce of X, then X → Y and Y → X by AlltoAll (twice is the identity), so
     * after K rounds X holds the sum times n^(K-1), wrapping like int32.
     */
    @Test
    void mixedAlltoAllAndAllReduceUnderRandomDelays() {
        int n = 3;
        int count = 8_000; // per block: 24 K elements per buffer, the PCIe share over several 4K chunks
        int rounds = 100;
        FlexLinkConfig config = config("pcie=0.5");
        HostFaults delays = randomDelays(false);
        try (HostBackend backend = new HostBackend(config, delays)) {
            Communicator[] comms = FlexLink.initAll(backend, config, 0, 1, 2);
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] x = new DeviceMemory[n];
            DeviceMemory[] y = new DeviceMemory[n];
            int total = n * count;
            int[] sum = new int[total];
            SplittableRandom data = new SplittableRandom(2027);
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                x[r] = backend.allocate(r, total * 4L);
                y[r] = backend.allocate(r, total * 4L);
                ByteBuffer b = ByteBuffer.allocateDirect(total * 4).order(ByteOrder.nativeOrder());
                for (int i = 0; i < total; i++) {
                    int v = data.nextInt();
                    sum[i] += v;
                    b.putInt(4 * i, v);
                }
                backend.upload(x[r].address(), b);
            }
            int factor = 1;
            for (int k = 1; k < rounds; k++) {
                factor *= n;
            }
            int f = factor;
            assertTimeoutPreemptively(Duration.ofMinutes(5), () -> {
                for (int k = 0; k < rounds; k++) {
                    for (int r = 0; r < n; r++) {
                        comms[r].allReduce(x[r], x[r], total, DataType.INT32, ReduceOp.SUM, streams[r]);
                    }
                    FlexLink.groupStart();
                    for (int r = 0; r < n; r++) {
                        comms[r].allToAll(x[r], y[r], count, DataType.INT32, streams[r]);
                    }
                    FlexLink.groupEnd();
                    FlexLink.groupStart();
                    for (int r = 0; r < n; r++) {
                        comms[r].allToAll(y[r], x[r], count, DataType.INT32, streams[r]);
                    }
                    FlexLink.groupEnd();
                }
                for (RuntimeStream s : streams) {
                    s.synchronize();
                }
            });
            for (int r = 0; r < n; r++) {
                ByteBuffer b = ByteBuffer.allocateDirect(total * 4).order(ByteOrder.nativeOrder());
                backend.download(b, x[r].address());
                for (int i = 0; i < total; i++) {
                    assertEquals(sum[i] * f, b.getInt(4 * i), "rank " + r + " element " + i);
                }
                long[] carried = io.flexlink.testing.Paths.bytes(comms[r]);
                org.junit.jupiter.api.Assertions.assertTrue(carried[0] > 0 && carried[1] > 0, "both paths carried");
                comms[r].close();
                streams[r].close();
                x[r].close();
                y[r].close();
            }
        }
    }
}
