package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.BytePointer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * NCCL's tuning fields on a GPU: a one-rank facade communicator made by ncclCommInitRankConfig with minCTAs 2,
 * maxCTAs 4, cgaClusterSize 2 and no netName (its primary made by NCCL with that config) runs an AllReduce right
 * and reports no error, from FlexLink nor from the NCCL primary; the core API's tuned backend makes a tuned
 * primary through the grouped init of initAll, and its split's child; the config the primary gets, read through
 * bytedeco's accessors (the real header's layout).
 */
@Tag("gpu")
class NcclTuningGpuTest {
    private static final int N = (1 << 20) + 7;

    private static ncclConfig_t config() {
        int undef = NcclTuning.UNDEF;
        return new ncclConfig_t().size(96).magic(0xcafebeef).version(FlexNccl.NCCL_VERSION_CODE).blocking(undef)
                .cgaClusterSize(2).minCTAs(2).maxCTAs(4).netName(null).splitShare(undef).trafficClass(undef)
                .commName(null).collnetEnable(undef).CTAPolicy(undef).shrinkShare(undef).nvlsCTAs(undef)
                .nChannelsPerNetPeer(undef).nvlinkCentricSched(undef).graphUsageMode(undef).numRmaCtx(undef)
                .maxP2pPeers(undef).graphStreamOrdering(undef);
    }

    @Test
    void aTunedOneRankFacadeCommunicatorAllReduces() {
        GpuTests.assumeCuda();
        assertEquals(0, cudart.cudaSetDevice(0));
        ncclUniqueId id = new ncclUniqueId();
        assertEquals(FlexNccl.ncclSuccess, FlexNccl.ncclGetUniqueId(id));
        ncclComm comm = new ncclComm();
        try (ncclConfig_t config = config()) {
            assertEquals(FlexNccl.ncclSuccess, FlexNccl.ncclCommInitRankConfig(comm, 1, id, 0, config));
        }
        NcclFacade.FacadeComm facade = NcclFacade.lookup(comm);
        assertNotNull(facade.nccl, "the primary is an NCCL communicator");
        try (CudaBackend backend = GpuTests.open(); DeviceMemory send = backend.allocate(0, 4L * N);
             DeviceMemory recv = backend.allocate(0, 4L * N)) {
            ByteBuffer b = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
            for (int i = 0; i < N; i++) {
                b.putInt(4 * i, -1);
            }
            backend.upload(recv.address(), b);
            for (int i = 0; i < N; i++) {
                b.putInt(4 * i, 7 * i % 1_000_003 - 500_000);
            }
            backend.upload(send.address(), b);
            assertEquals(FlexNccl.ncclSuccess, FlexNccl.ncclAllReduce(new RawPointer().set(send.address()),
                    new RawPointer().set(recv.address()), N, FlexNccl.ncclInt32, FlexNccl.ncclSum, comm, null));
            assertEquals(0, cudart.cudaDeviceSynchronize());
            backend.download(b, recv.address());
            for (int i = 0; i < N; i++) {
                assertEquals(7 * i % 1_000_003 - 500_000, b.getInt(4 * i), "element " + i);
            }
        }
        int[] error = {-1};
        assertEquals(FlexNccl.ncclSuccess, FlexNccl.ncclCommGetAsyncError(comm, error));
        assertEquals(FlexNccl.ncclSuccess, error[0]);
        int[] primary = {-1};
        assertEquals(FlexNccl.ncclSuccess, facade.nccl.asyncError(primary), "NCCL's own ncclCommGetAsyncError");
        assertEquals(FlexNccl.ncclSuccess, primary[0]);
        assertEquals(FlexNccl.ncclSuccess, FlexNccl.ncclCommDestroy(comm));
    }

    /** The core API: CudaBackend.tuned, initAll's grouped ncclCommInitRankConfig, and a split child on it. */
    @Test
    void theCoreApisTunedBackendMakesTunedPrimariesAndChildren() {
        try (CudaBackend backend = GpuTests.open()) {
            Backend tuned = backend.tuned(NcclTuning.DEFAULT.minCTAs(2).maxCTAs(4).cgaClusterSize(2));
            assertTrue(tuned.primaryTransport().describe().endsWith("(cgaClusterSize=2 minCTAs=2 maxCTAs=4)"),
                    tuned.primaryTransport().describe());
            FlexLinkConfig config = FlexLinkConfig.fromEnvironment();
            Communicator c = FlexLink.initAll(tuned, config, 0)[0];
            Optional<Communicator> child = c.split(0, 0);
            try {
                allReduce(backend, c, 3);
                allReduce(backend, child.orElseThrow(), 5);
                assertEquals(Result.SUCCESS, c.getAsyncError());
                assertEquals(Result.SUCCESS, child.get().getAsyncError());
            } finally {
                child.ifPresent(Communicator::close);
                c.close();
            }
            tuned.close(); // leaves the backend open:
            try (DeviceMemory m = backend.allocate(0, 64)) {
                assertTrue(m.address() != 0);
            }
        }
    }

    private static void allReduce(CudaBackend backend, Communicator c, int scale) {
        try (DeviceMemory send = backend.allocate(0, 4L * N); DeviceMemory recv = backend.allocate(0, 4L * N);
             RuntimeStream s = backend.createStream(0, "tuned")) {
            ByteBuffer b = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
            for (int i = 0; i < N; i++) {
                b.putInt(4 * i, -1);
            }
            backend.upload(recv.address(), b);
            for (int i = 0; i < N; i++) {
                b.putInt(4 * i, scale * (i % 9973));
            }
            backend.upload(send.address(), b);
            c.allReduce(send.address(), recv.address(), N, DataType.INT32, ReduceOp.SUM, s);
            s.synchronize();
            backend.download(b, recv.address());
            for (int i = 0; i < N; i++) {
                assertEquals(scale * (i % 9973), b.getInt(4 * i), "element " + i);
            }
        }
    }

    /** What NcclTuning writes is where the real header's fields are (bytedeco's accessors read it). */
    @Test
    void thePrimarysConfigReadsBackThroughBytedeco() {
        GpuTests.assumeCuda();
        NcclTuning t = NcclTuning.DEFAULT.cgaClusterSize(2).minCTAs(3).maxCTAs(4).netName("Socket")
                .trafficClass(5).collnetEnable(1).ctaPolicy(6).nvlsCTAs(7).nChannelsPerNetPeer(8).nvlinkCentricSched(0)
                .graphUsageMode(2).numRmaCtx(9).maxP2pPeers(10).graphStreamOrdering(1);
        try (ncclConfig_t c = new ncclConfig_t(); BytePointer net = new BytePointer("Socket")) {
            t.write(c.address(), net.address());
            assertEquals(96, c.size());
            assertEquals(0xcafebeef, c.magic());
            assertEquals(FlexNccl.NCCL_VERSION_CODE, c.version());
            assertEquals(1, c.blocking());
            assertEquals(2, c.cgaClusterSize());
            assertEquals(3, c.minCTAs());
            assertEquals(4, c.maxCTAs());
            assertEquals("Socket", c.netName().getString());
            assertEquals(NcclTuning.UNDEF, c.splitShare());
            assertEquals(5, c.trafficClass());
            assertEquals(0, UNSAFE.getLong(c.address() + FacadeOptions.COMM_NAME));
            assertEquals(1, c.collnetEnable());
            assertEquals(6, c.CTAPolicy());
            assertEquals(NcclTuning.UNDEF, c.shrinkShare());
            assertEquals(7, c.nvlsCTAs());
            assertEquals(8, c.nChannelsPerNetPeer());
            assertEquals(0, c.nvlinkCentricSched());
            assertEquals(2, c.graphUsageMode());
            assertEquals(9, c.numRmaCtx());
            assertEquals(10, c.maxP2pPeers());
            assertEquals(1, c.graphStreamOrdering());
        }
    }
}
