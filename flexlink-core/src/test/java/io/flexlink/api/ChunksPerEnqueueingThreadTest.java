package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.PathStreams;
import io.flexlink.testing.Paths;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A staged path's chunks are sized by how many ranks one thread enqueues (docs/design.md, "the host's enqueue
 * budget"): the ranks of {@code initAll}, which one thread drives, move a short AllReduce (a 2 MiB segment per
 * owner) in one chunk per rank, through the larger slots of {@code flexlink.chunkBytes=auto}; the same call
 * between ranks made one by one ({@code initRank}) keeps four chunks in the 8 MiB slots. Counted where the
 * engine calls the PCIe path's streams (one reduction launch per owner chunk), with every byte on the PCIe
 * path and the results checked against outputs poisoned before the call.
 */
class ChunksPerEnqueueingThreadTest {
    private static final int N = 4;
    /** Floats per rank: 8 MiB, a 2 MiB segment per owner. */
    private static final int COUNT = 2 << 20;
    private static final int CALLS = 2;
    /** The PCIe path alone, every call split; two slots keep the four ranks' staging at 128 MiB. */
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie")
            .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.SLOTS, "2")
            .set(FlexLinkConfig.TUNING_CACHE, "off").set(FlexLinkConfig.TIMEOUT, "0").build();

    @Test
    void ranksOfInitAllMoveAShortAllReduceInOneChunkEach() {
        assertEquals(1, chunksPerCallAndRank(true));
    }

    @Test
    void ranksMadeOneByOneKeepFourChunks() {
        assertEquals(4, chunksPerCallAndRank(false));
    }

    /** Reduction launches on the PCIe path per call and rank, after checking every call's result. */
    private static long chunksPerCallAndRank(boolean initAll) {
        try (HostBackend host = new HostBackend(CONFIG)) {
            PathStreams counting = new PathStreams(host, PathStreams.Mode.COUNT);
            Communicator[] comms = initAll ? FlexLink.initAll(counting, CONFIG, new int[N]) : oneByOne(counting);
            DeviceMemory[] in = new DeviceMemory[N];
            DeviceMemory[] out = new DeviceMemory[N];
            RuntimeStream[] streams = new RuntimeStream[N];
            try {
                for (int r = 0; r < N; r++) {
                    in[r] = host.allocate(0, 4L * COUNT);
                    out[r] = host.allocate(0, 4L * COUNT);
                    streams[r] = host.createStream(0, "user.r" + r);
                    host.upload(in[r].address(), input(r));
                }
                for (int call = 0; call <= CALLS; call++) {
                    if (call == 1) {
                        counting.reset(); // the first call set things up
                    }
                    for (DeviceMemory o : out) {
                        host.fill(o.address(), o.byteSize(), (byte) 0xFF); // NaN everywhere
                    }
                    FlexLink.groupStart();
                    for (int r = 0; r < N; r++) {
                        comms[r].allReduce(in[r].address(), out[r].address(), COUNT, DataType.FLOAT32, ReduceOp.SUM,
                                streams[r]);
                    }
                    FlexLink.groupEnd();
                    for (int r = 0; r < N; r++) {
                        streams[r].synchronize();
                        assertArrayEquals(expected(), output(host, out[r]), "rank " + r + ", call " + call);
                    }
                }
                for (Communicator c : comms) {
                    assertEquals(List.of("primary(off)", "pcie"), Paths.names(c));
                    assertArrayEquals(new long[] {0, 4L * COUNT * (CALLS + 1)}, Paths.bytes(c), "every byte on PCIe");
                }
                return counting.byMethod().get("reduceRows")[0] / ((long) CALLS * N);
            } finally {
                for (int r = 0; r < N; r++) {
                    comms[r].close();
                    close(in[r]);
                    close(out[r]);
                    if (streams[r] != null) {
                        streams[r].close();
                    }
                }
            }
        }
    }

    /** Every rank made by {@code initRank}, in one group (NCCL's way of making several ranks from one thread). */
    private static Communicator[] oneByOne(io.flexlink.runtime.Backend backend) {
        Communicator[] comms = new Communicator[N];
        UniqueId id = UniqueId.random();
        FlexLink.groupStart();
        for (int r = 0; r < N; r++) {
            comms[r] = FlexLink.initRank(backend, CONFIG, N, id, r, 0);
        }
        FlexLink.groupEnd();
        return comms;
    }

    private static ByteBuffer input(int rank) {
        ByteBuffer b = ByteBuffer.allocateDirect(4 * COUNT).order(ByteOrder.nativeOrder());
        for (int i = 0; i < COUNT; i++) {
            b.putFloat(4 * i, i % 13 + rank);
        }
        return b;
    }

    private static float[] expected() {
        float[] e = new float[COUNT];
        for (int i = 0; i < COUNT; i++) {
            e[i] = N * (i % 13) + N * (N - 1) / 2f;
        }
        return e;
    }

    private static float[] output(HostBackend host, DeviceMemory m) {
        ByteBuffer b = ByteBuffer.allocateDirect(4 * COUNT).order(ByteOrder.nativeOrder());
        host.download(b, m.address());
        float[] f = new float[COUNT];
        b.asFloatBuffer().get(f);
        return f;
    }

    private static void close(DeviceMemory m) {
        if (m != null) {
            m.close();
        }
    }
}
