package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two in-place AlltoAlls of one communicator in one group, on NCCL: each call's input is copied aside on the
 * stream first, and NCCL launches a group's calls only at its end, after both copies. With one copy for the
 * whole group the first call sent the second call's data; now each group position has its own.
 */
@Tag("gpu")
class GroupedInPlaceGpuTest {
    static final int COUNT = (1 << 16) + 3;

    @ParameterizedTest(name = "paths {0}")
    @ValueSource(strings = {"primary", "primary,pcie"})
    void twoInPlaceAllToAllsInOneGroupEachSendTheirOwnInput(String paths) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .set(FlexLinkConfig.PATHS, paths).set(FlexLinkConfig.TUNING_CACHE, "off").build();
        try (CudaBackend backend = GpuTests.open()) {
            Communicator comm = FlexLink.initAll(backend, config, 0)[0];
            RuntimeStream s = backend.createStream(0, "grouped.inplace");
            DeviceMemory[] bufs = {backend.allocate(0, 4L * COUNT), backend.allocate(0, 4L * COUNT)};
            for (int call = 0; call < 2; call++) {
                ByteBuffer in = ByteBuffer.allocateDirect(4 * COUNT).order(ByteOrder.nativeOrder());
                for (int i = 0; i < COUNT; i++) {
                    in.putInt(4 * i, 1_000_000 * (call + 1) + i);
                }
                backend.upload(bufs[call].address(), in);
            }
            FlexLink.groupStart();
            for (DeviceMemory b : bufs) {
                comm.allToAll(b.address(), b.address(), COUNT, DataType.INT32, s);
            }
            FlexLink.groupEnd();
            s.synchronize();
            for (int call = 0; call < 2; call++) {
                ByteBuffer got = ByteBuffer.allocateDirect(4 * COUNT).order(ByteOrder.nativeOrder());
                backend.download(got, bufs[call].address());
                for (int i = 0; i < COUNT; i++) {
                    assertEquals(1_000_000 * (call + 1) + i, got.getInt(4 * i), "call " + call + ", element " + i);
                }
            }
            for (DeviceMemory b : bufs) {
                b.close();
            }
            comm.close();
            s.close();
        }
    }
}
