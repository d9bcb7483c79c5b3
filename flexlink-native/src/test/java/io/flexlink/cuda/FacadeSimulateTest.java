package io.flexlink.cuda;

import static io.flexlink.cuda.FacadeHostRanks.handles;
import static io.flexlink.cuda.FlexNccl.*;
import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.launch.GroupEstimate;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;
import org.junit.jupiter.api.Test;

/**
 * ncclGroupSimulateEnd through the facade without a GPU: the struct read from its address as NCCL lays it out
 * (bytedeco's ncclSimInfo_t class needs CUDA to load), NCCL's codes (outside a group, a bad magic), an inner end
 * leaving the struct alone, and the outermost writing the estimate in microseconds with nothing launched.
 */
class FacadeSimulateTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "2")
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    private static final int N = 40_000;

    /** NCCL_SIM_INFO_INITIALIZER: size, magic, version, estimatedTime NCCL_UNDEF_FLOAT. */
    private static BytePointer simInfo(int magic) {
        BytePointer p = new BytePointer(FacadeSimulate.BYTES);
        UNSAFE.putLong(p.address(), FacadeSimulate.BYTES);
        UNSAFE.putInt(p.address() + FacadeSimulate.MAGIC_AT, magic);
        UNSAFE.putInt(p.address() + 12, NCCL_VERSION_CODE);
        UNSAFE.putFloat(p.address() + FacadeSimulate.ESTIMATED_TIME_AT, -1f);
        return p;
    }

    private static float estimated(BytePointer p) {
        return UNSAFE.getFloat(p.address() + FacadeSimulate.ESTIMATED_TIME_AT);
    }

    @Test
    void theOutermostEndWritesTheEstimateAndLaunchesNothing() {
        try (HostBackend backend = new HostBackend(CONFIG); BytePointer info = simInfo(FacadeSimulate.MAGIC);
             BytePointer bad = simInfo(0x1234)) {
            assertEquals(ncclInvalidUsage, FacadeSimulate.simulateEnd(info), "outside a group");
            Communicator[] comms = FlexLink.initAll(backend, CONFIG, 0, 1);
            ncclComm[] h = handles(comms, true);
            DeviceMemory[] buf = new DeviceMemory[2];
            RuntimeStream[] s = new RuntimeStream[2];
            for (int r = 0; r < 2; r++) {
                buf[r] = backend.allocate(r, 4L * N);
                backend.fill(buf[r].address(), 4L * N, (byte) 0x11);
                s[r] = backend.createStream(r, "facade-simulate." + r);
            }
            assertEquals(ncclSuccess, ncclGroupStart());
            assertEquals(ncclSuccess, ncclGroupStart());
            for (int r = 0; r < 2; r++) { // the calls a facade collective makes, on host-backend communicators
                comms[r].allReduce(buf[r].address(), buf[r].address(), N, DataType.FLOAT32, ReduceOp.SUM, s[r]);
            }
            assertEquals(ncclSuccess, FacadeSimulate.simulateEnd(info), "an inner end");
            assertEquals(-1f, estimated(info), "an inner end leaves the struct alone");
            assertEquals(ncclSuccess, FacadeSimulate.simulateEnd(info));
            assertEquals(0, NcclFacade.groupDepth());
            double us = 1e6 * (GroupEstimate.LATENCY_SECONDS + 4.0 * N / GroupEstimate.BUS_BYTES_PER_SECOND);
            assertEquals((float) us, estimated(info), 1e-3f);
            for (int r = 0; r < 2; r++) {
                s[r].synchronize();
                for (long i = 0; i < 4L * N; i += 4099) {
                    assertEquals((byte) 0x11, UNSAFE.getByte(buf[r].address() + i), "nothing ran: byte " + i);
                }
            }
            // a bad magic: ncclInvalidArgument, the group's calls dropped, the group ended
            assertEquals(ncclSuccess, ncclGroupStart());
            comms[0].allReduce(buf[0].address(), buf[0].address(), N, DataType.FLOAT32, ReduceOp.SUM, s[0]);
            assertEquals(ncclInvalidArgument, FacadeSimulate.simulateEnd(bad));
            assertTrue(ncclGetLastError(null).getString().contains("simInfo.magic"));
            assertEquals(-1f, estimated(bad));
            assertEquals(0, NcclFacade.groupDepth());
            assertEquals(ncclInvalidUsage, ncclGroupEnd(), "the group was ended");
            s[0].synchronize();
            assertEquals((byte) 0x11, UNSAFE.getByte(buf[0].address()), "the dropped call never ran");
            for (int r = 0; r < 2; r++) {
                s[r].close();
                buf[r].close();
                assertEquals(ncclSuccess, ncclCommDestroy(h[r]));
            }
        }
    }
}
