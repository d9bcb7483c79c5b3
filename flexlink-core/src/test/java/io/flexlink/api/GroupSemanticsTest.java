package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.CommStats;
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
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * NCCL's group semantics with split calls: calls of one communicator inside a group run in call order
 * even when a later one reads what an earlier one wrote, a group with one call per communicator (one
 * thread driving several GPUs) still splits it, and a failing group end leaves the thread outside the group.
 */
class GroupSemanticsTest {
    private static final int N = 16384;

    private static FlexLinkConfig config() {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    /** Ranks with seeded random int32 buffers, one stream each. */
    private static final class Ranks implements AutoCloseable {
        final HostBackend backend;
        final Communicator[] comms;
        final RuntimeStream[] streams;
        final DeviceMemory[] buffers;
        final int[][] input;

        Ranks(int n, long seed) {
            FlexLinkConfig config = config();
            backend = new HostBackend(config);
            int[] devices = new int[n];
            for (int r = 0; r < n; r++) {
                devices[r] = r;
            }
            comms = FlexLink.initAll(backend, config, devices);
            streams = new RuntimeStream[n];
            buffers = new DeviceMemory[n];
            input = new int[n][N];
            Random random = new Random(seed);
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                buffers[r] = backend.allocate(r, N * 4L);
                ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
                for (int i = 0; i < N; i++) {
                    input[r][i] = random.nextInt(1 << 20) - (1 << 19);
                    b.putInt(input[r][i]);
                }
                b.flip();
                backend.upload(buffers[r].address(), b);
            }
        }

        int[] download(int r) {
            streams[r].synchronize();
            ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
            backend.download(b, buffers[r].address());
            int[] out = new int[N];
            b.asIntBuffer().get(out);
            return out;
        }

        long pcieBytes(int r) {
            for (CommStats.PathTotals t : comms[r].stats().paths()) {
                if (t.path().equals("pcie")) {
                    return t.bytes();
                }
            }
            throw new AssertionError("no pcie path in " + comms[r].stats().paths());
        }

        @Override
        public void close() {
            for (Communicator c : comms) {
                c.close();
            }
            for (int r = 0; r < comms.length; r++) {
                streams[r].close();
                buffers[r].close();
            }
            backend.close();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3})
    void dependentCallsOfOneGroupRunInCallOrder(int n) {
        try (Ranks ranks = new Ranks(n, 42 + n)) {
            FlexLink.groupStart();
            for (int r = 0; r < n; r++) {
                ranks.comms[r].allReduce(ranks.buffers[r], ranks.buffers[r], N, DataType.INT32, ReduceOp.MAX,
                        ranks.streams[r]);
            }
            for (int r = 0; r < n; r++) {
                ranks.comms[r].allReduce(ranks.buffers[r], ranks.buffers[r], N, DataType.INT32, ReduceOp.SUM,
                        ranks.streams[r]);
            }
            FlexLink.groupEnd();
            for (int r = 0; r < n; r++) {
                int[] out = ranks.download(r);
                for (int i = 0; i < N; i++) {
                    int max = Integer.MIN_VALUE;
                    for (int q = 0; q < n; q++) {
                        max = Math.max(max, ranks.input[q][i]);
                    }
                    assertEquals(n * max, out[i], "rank " + r + " element " + i + ": MAX must run before SUM");
                }
            }
        }
    }

    @Test
    void oneCallPerCommunicatorInAGroupIsStillSplit() {
        try (Ranks ranks = new Ranks(2, 7)) {
            FlexLink.groupStart();
            for (int r = 0; r < 2; r++) {
                ranks.comms[r].allReduce(ranks.buffers[r], ranks.buffers[r], N, DataType.INT32, ReduceOp.SUM,
                        ranks.streams[r]);
            }
            FlexLink.groupEnd();
            for (int r = 0; r < 2; r++) {
                int[] out = ranks.download(r);
                for (int i = 0; i < N; i++) {
                    assertEquals(ranks.input[0][i] + ranks.input[1][i], out[i], "rank " + r + " element " + i);
                }
                assertEquals(N * 4L / 2, ranks.pcieBytes(r), "half the buffer on the PCIe path");
            }
        }
    }

    @Test
    void severalCallsOfOneCommunicatorInAGroupStayOnThePrimaryPath() {
        try (Ranks ranks = new Ranks(2, 9)) {
            FlexLink.groupStart();
            for (int k = 0; k < 3; k++) {
                for (int r = 0; r < 2; r++) {
                    ranks.comms[r].allReduce(ranks.buffers[r], ranks.buffers[r], N, DataType.INT32, ReduceOp.SUM,
                            ranks.streams[r]);
                }
            }
            FlexLink.groupEnd();
            for (int r = 0; r < 2; r++) {
                int[] out = ranks.download(r);
                for (int i = 0; i < N; i++) {
                    assertEquals(4 * (ranks.input[0][i] + ranks.input[1][i]), out[i], "rank " + r + " element " + i);
                }
                assertEquals(0, ranks.pcieBytes(r));
            }
            // the next group with one call each splits again
            FlexLink.groupStart();
            for (int r = 0; r < 2; r++) {
                ranks.comms[r].allReduce(ranks.buffers[r], ranks.buffers[r], N, DataType.INT32, ReduceOp.SUM,
                        ranks.streams[r]);
            }
            FlexLink.groupEnd();
            for (int r = 0; r < 2; r++) {
                ranks.download(r);
                assertEquals(N * 4L / 2, ranks.pcieBytes(r));
            }
        }
    }

    @Test
    void aFailingGroupEndStillEndsTheGroupAndLaunchesTheOtherCommunicators() {
        try (Ranks ranks = new Ranks(2, 11); Ranks other = new Ranks(1, 12)) {
            FlexLink.groupStart();
            for (int r = 0; r < 2; r++) {
                ranks.comms[r].allReduce(ranks.buffers[r], ranks.buffers[r], N, DataType.INT32, ReduceOp.SUM,
                        ranks.streams[r]);
            }
            other.comms[0].allReduce(other.buffers[0], other.buffers[0], N, DataType.INT32, ReduceOp.SUM,
                    other.streams[0]);
            ranks.comms[0].abort();
            ranks.comms[1].abort();
            FlexLinkException e = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
            assertTrue(e.result() != Result.SUCCESS);
            assertFalse(io.flexlink.launch.Groups.active(), "the thread is outside the group after a failing end");
            int[] out = other.download(0);
            for (int i = 0; i < N; i++) {
                assertEquals(other.input[0][i], out[i], "the healthy communicator's call ran");
            }
        }
    }
}
