package io.flexlink.api;

import static io.flexlink.api.SplitTest.closeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.launch.GroupEstimate;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * {@link FlexLink#groupSimulateEnd()}, NCCL's ncclGroupSimulateEnd: the group's calls are estimated, never
 * launched (their outputs keep their poison), and forgotten (the next group runs only its own calls); an inner
 * end returns NaN; outside a group INVALID_USAGE; a group with a failed call throws that call's error.
 */
class GroupSimulateTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "2")
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();
    private static final int N = 50_000;

    @Test
    void theGroupsCallsAreEstimatedNeverLaunchedAndForgotten() {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] comms = FlexLink.initAll(backend, CONFIG, 0, 1);
            DeviceMemory[] recv = new DeviceMemory[2];
            DeviceMemory[] send = new DeviceMemory[2];
            RuntimeStream[] streams = new RuntimeStream[2];
            for (int r = 0; r < 2; r++) {
                send[r] = backend.allocate(r, 4L * N);
                recv[r] = backend.allocate(r, 4L * N);
                backend.fill(send[r].address(), 4L * N, (byte) 1);
                backend.fill(recv[r].address(), 4L * N, (byte) 0x7f);
                streams[r] = backend.createStream(r, "simulate." + r);
            }
            FlexLink.groupStart();
            FlexLink.groupStart();
            for (int r = 0; r < 2; r++) {
                comms[r].allReduce(send[r].address(), recv[r].address(), N, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
                comms[r].allGather(send[r].address(), recv[r].address(), N / 2, DataType.FLOAT32, streams[r]);
            }
            assertTrue(Double.isNaN(FlexLink.groupSimulateEnd()), "an inner end estimates nothing");
            double seconds = FlexLink.groupSimulateEnd();
            // fixed shares are never timed: per rank 10 µs + bus bytes at 25 GB/s for each call, added up
            double allReduce = GroupEstimate.LATENCY_SECONDS + 4.0 * N / GroupEstimate.BUS_BYTES_PER_SECOND;
            double allGather = GroupEstimate.LATENCY_SECONDS + 4.0 * N / GroupEstimate.BUS_BYTES_PER_SECOND;
            assertEquals(allReduce + allGather, seconds, 1e-12);
            ByteBuffer b = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
            for (int r = 0; r < 2; r++) {
                streams[r].synchronize();
                backend.download(b, recv[r].address());
                for (int i = 0; i < N; i++) {
                    assertEquals(0x7f7f7f7f, b.getInt(4 * i), "rank " + r + " element " + i + ": nothing ran");
                }
            }
            // forgotten: a real group now runs its own calls only, exactly
            try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 9_001, 0,
                        false, 3);
                assertEquals(0, o.wrong, o.toString());
            }
            FlexLinkException outside = assertThrows(FlexLinkException.class, FlexLink::groupSimulateEnd);
            assertEquals(Result.INVALID_USAGE, outside.result(), outside.getMessage());
            // a group whose call failed: that call's error, nothing launched
            FlexLink.groupStart();
            comms[0].allReduce(send[0].address(), recv[0].address(), N, DataType.FLOAT32, ReduceOp.SUM, streams[0]);
            assertThrows(FlexLinkException.class, () -> comms[1].allReduce(send[1].address(), recv[1].address(), -1,
                    DataType.FLOAT32, ReduceOp.SUM, streams[1]));
            FlexLinkException failed = assertThrows(FlexLinkException.class, FlexLink::groupSimulateEnd);
            assertEquals(Result.INVALID_ARGUMENT, failed.result(), failed.getMessage());
            assertTrue(!io.flexlink.launch.Groups.active());
            for (int r = 0; r < 2; r++) {
                streams[r].close();
                send[r].close();
                recv[r].close();
            }
            closeAll(comms);
        }
    }
}
