package io.flexlink.cuda;

import static io.flexlink.testing.Downloads.download;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.EventTrace;
import io.flexlink.testing.MaxThenSum;
import java.util.List;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The order of a group's calls on the GPU, for two ranks of GPU 0 (no primary path: every collective is split):
 * dependent collectives of one communicator in one group run in call order (on one stream or two, with and without
 * the enqueue thread), and a group on two streams per rank
 * (collectives on one, sends and receives on the other) waits for what each stream held before it and holds each
 * stream until all of it is done. Every element checked, and the traced order of forks and waits.
 */
@Tag("gpu")
class GroupOrderGpuTest {
    private static final int N = 3 << 20; // int32 elements: 12 MB per rank, several chunks

    private static FlexLinkConfig config(boolean enqueueThread) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.ENQUEUE_THREAD, enqueueThread ? "on" : "off").build();
    }

    /**
     * Per rank, MAX then SUM of one buffer in one group; {@code twoStreams}: the SUM on a second stream (the chain
     * then links the streams); {@code enqueueThread}: the paths' part enqueued by each communicator's thread.
     */
    @ParameterizedTest(name = "second stream {0}, enqueue thread {1}")
    @CsvSource({"false, false", "true, false", "false, true", "true, true"})
    void dependentCollectivesOfOneGroupRunInCallOrder(boolean twoStreams, boolean enqueueThread) {
        try (CudaBackend backend = GpuTests.open()) {
            EventTrace traced = new EventTrace(backend);
            Communicator[] comms = FlexLink.initAll(traced, config(enqueueThread), new int[2]);
            RuntimeStream[] s = {traced.createStream(0, "user0"), traced.createStream(0, "user1")};
            RuntimeStream[] second = twoStreams ? new RuntimeStream[] {traced.createStream(0, "user.b0"),
                    traced.createStream(0, "user.b1")} : s;
            DeviceMemory[] buf = {backend.allocate(0, N * 4L), backend.allocate(0, N * 4L)};
            try {
                for (int call = 0; call < 3; call++) {
                    assertEquals(0, MaxThenSum.run(backend, comms, s, second, buf, N, call),
                            "group " + call + ": MAX, then SUM of the maxima");
                }
                for (int r = 0; r < 2; r++) {
                    // the data may come out right by luck; the order may not: each SUM forks only after its stream
                    // waited for what came before (the MAX's joins, or the link from the MAX's stream)
                    List<Integer> forks = traced.forks(r);
                    assertEquals(6, forks.size(), "rank " + r + ": two forks a group, three groups");
                    for (int k = 1; k < forks.size(); k += 2) {
                        String stream = traced.ops().get(forks.get(k)).stream();
                        assertTrue(traced.waitsBetween(stream, forks.get(k - 1), forks.get(k)) > 0,
                                "rank " + r + ", group " + k / 2 + ": the SUM's stream waited before its fork");
                    }
                }
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
                for (int r = 0; r < 2; r++) {
                    s[r].close();
                    if (second != s) {
                        second[r].close();
                    }
                    buf[r].close();
                }
            }
        }
    }

    @Test
    void aGroupOnTwoStreamsPerRankJoinsThemBeforeAndAfter() {
        try (CudaBackend backend = GpuTests.open()) {
            Communicator[] comms = FlexLink.initAll(backend, config(false), new int[2]);
            RuntimeStream[] s = {backend.createStream(0, "user.s0"), backend.createStream(0, "user.s1")};
            RuntimeStream[] t = {backend.createStream(0, "user.t0"), backend.createStream(0, "user.t1")};
            DeviceMemory[][] m = new DeviceMemory[2][4]; // g, fresh, moved, after
            try {
                for (int r = 0; r < 2; r++) {
                    for (int k = 0; k < 4; k++) {
                        m[r][k] = backend.allocate(0, N * 4L);
                        backend.fill(m[r][k].address(), N * 4L, (byte) 0xA5);
                    }
                    backend.upload(m[r][1].address(), ints(r, 7));
                    t[r].copy(m[r][0].address(), m[r][1].address(), N * 4L); // the input, written on T before
                }
                FlexLink.groupStart();
                try {
                    for (int r = 0; r < 2; r++) {
                        comms[r].allReduce(m[r][0].address(), m[r][0].address(), N, DataType.INT32, ReduceOp.SUM,
                                s[r]);
                    }
                    comms[0].send(m[0][1].address(), N, DataType.INT32, 1, t[0]);
                    comms[1].recv(m[1][2].address(), N, DataType.INT32, 0, t[1]);
                } finally {
                    FlexLink.groupEnd();
                }
                for (int r = 0; r < 2; r++) {
                    t[r].copy(m[r][3].address(), m[r][0].address(), N * 4L); // the sum, read on T after the group
                    t[r].synchronize();
                }
                ByteBuffer a = ints(0, 7);
                ByteBuffer b = ints(1, 7);
                for (int r = 0; r < 2; r++) {
                    ByteBuffer after = download(backend, m[r][3]);
                    int wrong = 0;
                    for (int i = 0; i < N; i++) {
                        wrong += after.getInt(4 * i) == a.getInt(4 * i) + b.getInt(4 * i) ? 0 : 1;
                    }
                    assertEquals(0, wrong, "rank " + r + ": the sum of what T wrote before, read on T after");
                }
                assertEquals(a, download(backend, m[1][2]), "rank 0's transfer");
            } finally {
                for (Communicator c : comms) {
                    c.close();
                }
                for (int r = 0; r < 2; r++) {
                    s[r].close();
                    t[r].close();
                    for (DeviceMemory d : m[r]) {
                        if (d != null) {
                            d.close();
                        }
                    }
                }
            }
        }
    }

    private static ByteBuffer ints(int rank, int seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(N * 4).order(ByteOrder.nativeOrder());
        java.util.SplittableRandom random = new java.util.SplittableRandom(31L * seed + rank);
        for (int i = 0; i < N; i++) {
            b.putInt(4 * i, random.nextInt(1 << 24) - (1 << 23));
        }
        return b;
    }
}
