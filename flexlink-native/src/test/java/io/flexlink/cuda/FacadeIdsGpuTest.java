package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.facade.FacadeIdProgram;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import io.flexlink.testing.ProcessJob;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Loader;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #17 on a GPU: two JVMs on GPU 0 joining one ncclGetUniqueId made by a third process (this one,
 * no rank) and running an AllReduce; a grouped ncclCommInitRank of two ranks on GPU 0 from one thread;
 * non-blocking ncclCommInitRankConfig polled to success; ncclBcast; the core API's grouped initRank on the
 * CUDA backend; and the ncclConfig_t layout the facade reads raw, against bytedeco's accessors.
 */
@Tag("gpu")
class FacadeIdsGpuTest {
    private static final int N = 1 << 20;
    @TempDir
    Path logs;

    @Test
    void twoJvmsOnGpu0JoinOneUniqueIdMadeElsewhere() throws Exception {
        GpuTests.assumeCuda();
        ncclUniqueId id = new ncclUniqueId();
        assertEquals(FlexNccl.ncclSuccess, FlexNccl.ncclGetUniqueId(id));
        byte[] bytes = new byte[FlexNccl.NCCL_UNIQUE_ID_BYTES];
        id.internal().get(bytes);
        Map<String, String> env = new HashMap<>(ProcessJob.hostEnv("120s"));
        env.put("FLEXLINK_BACKEND", "cuda");
        env.put("FLEXLINK_CHUNK_BYTES", "2M");
        env.put("CUDA_VISIBLE_DEVICES", "0");
        env.put("CUDA_DEVICE_MAX_CONNECTIONS", "32");
        try (ProcessJob job = new ProcessJob(2, FacadeIdProgram.class.getName(),
                List.of("rank", Base64.getEncoder().encodeToString(bytes), String.valueOf(N)), env, null, "never",
                logs)) {
            for (int r = 0; r < 2; r++) {
                assertEquals(0, job.awaitExit(r, 300), "rank " + r + job.describe());
                assertEquals("OK", job.line(r, "OK"), job.describe());
            }
        }
    }

    @Test
    void groupedInitRankOfTwoRanksOnGpu0() {
        GpuTests.assumeCuda();
        FacadeIdProgram.groupedInitRank(N);
    }

    @Test
    void nonBlockingCreationPolledToSuccess() {
        GpuTests.assumeCuda();
        FacadeIdProgram.nonBlocking(N);
    }

    @Test
    void bcastInPlace() {
        GpuTests.assumeCuda();
        FacadeIdProgram.bcast(N + 3);
    }

    /** The core API's grouped creation on the CUDA backend: FlexLink.initRank × 2 on GPU 0 inside one group. */
    @Test
    void coreGroupedInitRankOfTwoRanksOnGpu0() {
        try (CudaBackend backend = GpuTests.open()) {
            FlexLinkConfig config = FlexLinkConfig.fromEnvironment();
            UniqueId id = FlexLink.getUniqueIdForProcesses(config);
            Communicator[] c = new Communicator[2];
            FlexLink.groupStart();
            try {
                for (int r = 0; r < 2; r++) {
                    c[r] = FlexLink.initRank(backend, config, 2, id, r, 0);
                    assertEquals(Result.IN_PROGRESS, c[r].getAsyncError());
                }
            } finally {
                FlexLink.groupEnd();
            }
            int n = N + 5;
            DeviceMemory[] send = new DeviceMemory[2];
            DeviceMemory[] recv = new DeviceMemory[2];
            RuntimeStream[] s = new RuntimeStream[2];
            ByteBuffer b = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.nativeOrder());
            try {
                for (int r = 0; r < 2; r++) {
                    assertEquals(Result.SUCCESS, c[r].getAsyncError());
                    send[r] = backend.allocate(0, n * 4L);
                    recv[r] = backend.allocate(0, n * 4L);
                    s[r] = backend.createStream(0, "grouped-init-" + r);
                    for (int i = 0; i < n; i++) {
                        b.putInt(i * 4, -1);
                    }
                    backend.upload(recv[r].address(), b);
                    for (int i = 0; i < n; i++) {
                        b.putInt(i * 4, (r + 1) * 1000 + i % 977);
                    }
                    backend.upload(send[r].address(), b);
                }
                FlexLink.groupStart();
                for (int r = 0; r < 2; r++) {
                    c[r].allReduce(send[r].address(), recv[r].address(), n, DataType.INT32, ReduceOp.SUM, s[r]);
                }
                FlexLink.groupEnd();
                for (int r = 0; r < 2; r++) {
                    s[r].synchronize();
                    backend.download(b, recv[r].address());
                    for (int i = 0; i < n; i++) {
                        assertEquals(3000 + 2 * (i % 977), b.getInt(i * 4), "rank " + r + " element " + i);
                    }
                }
            } finally {
                for (int r = 0; r < 2; r++) {
                    if (s[r] != null) {
                        s[r].close();
                    }
                    if (send[r] != null) {
                        send[r].close();
                    }
                    if (recv[r] != null) {
                        recv[r].close();
                    }
                    c[r].close();
                }
            }
        }
    }

    /** The offsets FacadeOptions reads are where bytedeco's accessors (the real header's) put each field. */
    @Test
    void configLayoutMatchesBytedecos() {
        GpuTests.assumeCuda();
        assertEquals(FacadeOptions.BYTES, Loader.sizeof(ncclConfig_t.class));
        try (ncclConfig_t c = new ncclConfig_t(); BytePointer net = new BytePointer("n");
             BytePointer name = new BytePointer("m")) {
            c.size(96).magic(0xcafebeef).version(23007).blocking(101).cgaClusterSize(102).minCTAs(103).maxCTAs(104)
                    .netName(net).splitShare(105).trafficClass(106).commName(name).collnetEnable(107).CTAPolicy(108)
                    .shrinkShare(109).nvlsCTAs(110).nChannelsPerNetPeer(111).nvlinkCentricSched(112)
                    .graphUsageMode(113).numRmaCtx(114).maxP2pPeers(115).graphStreamOrdering(116);
            long a = c.address();
            assertEquals(96, UNSAFE.getLong(a + FacadeOptions.SIZE));
            assertEquals(0xcafebeef, UNSAFE.getInt(a + FacadeOptions.MAGIC_AT));
            assertEquals(23007, UNSAFE.getInt(a + FacadeOptions.VERSION));
            int[] offsets = {FacadeOptions.BLOCKING, FacadeOptions.CGA_CLUSTER_SIZE, FacadeOptions.MIN_CTAS,
                FacadeOptions.MAX_CTAS, FacadeOptions.SPLIT_SHARE, FacadeOptions.TRAFFIC_CLASS,
                FacadeOptions.COLLNET_ENABLE, FacadeOptions.CTA_POLICY, FacadeOptions.SHRINK_SHARE,
                FacadeOptions.NVLS_CTAS, FacadeOptions.N_CHANNELS_PER_NET_PEER, FacadeOptions.NVLINK_CENTRIC_SCHED,
                FacadeOptions.GRAPH_USAGE_MODE, FacadeOptions.NUM_RMA_CTX, FacadeOptions.MAX_P2P_PEERS,
                FacadeOptions.GRAPH_STREAM_ORDERING};
            for (int i = 0; i < offsets.length; i++) {
                assertEquals(101 + i, UNSAFE.getInt(a + offsets[i]), "field " + i);
            }
            assertEquals(net.address(), UNSAFE.getLong(a + FacadeOptions.NET_NAME));
            assertEquals(name.address(), UNSAFE.getLong(a + FacadeOptions.COMM_NAME));
        }
    }
}
