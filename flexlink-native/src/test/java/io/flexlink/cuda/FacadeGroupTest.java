package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.ncclAllReduce;
import static io.flexlink.cuda.FlexNccl.ncclFloat32;
import static io.flexlink.cuda.FlexNccl.ncclGetLastError;
import static io.flexlink.cuda.FlexNccl.ncclGroupEnd;
import static io.flexlink.cuda.FlexNccl.ncclGroupStart;
import static io.flexlink.cuda.FlexNccl.ncclInvalidArgument;
import static io.flexlink.cuda.FlexNccl.ncclSuccess;
import static io.flexlink.cuda.FlexNccl.ncclSum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.Test;

/**
 * NCCL's groups are atomic: a call the facade refuses by its own checks (a datatype or an op it does not know,
 * a handle that is no communicator) cancels the thread's group like a call FlexLink refuses, and the group's
 * end launches nothing of it and returns the error. The group's other calls here come through the Java API
 * (the facade's collectives need CUDA streams); the refused one through the facade, before any stream is used.
 */
class FacadeGroupTest extends FacadeHostRanks {
    private static final long N = 4096;
    private static final byte POISON = (byte) 0x5A;

    /** One refused facade call among two ranks' AllReduces: nothing of the group runs, the end says why. */
    private void refusedCallCancelsTheGroup(int datatype, int op, boolean unknownHandle, String why) {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, true);
        DeviceMemory[] send = new DeviceMemory[2];
        DeviceMemory[] recv = new DeviceMemory[2];
        RuntimeStream[] streams = new RuntimeStream[2];
        try {
            for (int r = 0; r < 2; r++) {
                send[r] = backend.allocate(r, N * 4);
                recv[r] = backend.allocate(r, N * 4);
                backend.fill(send[r].address(), N * 4, (byte) 1);
                backend.fill(recv[r].address(), N * 4, POISON);
                streams[r] = backend.createStream(r, "user.r" + r);
            }
            assertEquals(ncclSuccess, ncclGroupStart());
            for (int r = 0; r < 2; r++) {
                CollectiveHarness.enqueue(Collective.ALL_REDUCE, world[r], send[r].address(), recv[r].address(), N,
                        DataType.FLOAT32, ReduceOp.SUM, 0, streams[r]);
            }
            ncclComm target = unknownHandle ? new ncclComm() : h[1];
            if (unknownHandle) {
                NcclFacade.setAddress(target, 0x7000_0000_0000L);
            }
            assertEquals(ncclInvalidArgument, ncclAllReduce(new Pointer(), new Pointer(), N, datatype, op, target,
                    null), why);
            assertEquals(ncclInvalidArgument, ncclGroupEnd(), "the group's end reports the refused call");
            assertTrue(ncclGetLastError(null).getString().contains("cancelled"), ncclGetLastError(null).getString());
            for (int r = 0; r < 2; r++) {
                streams[r].synchronize();
                ByteBuffer out = ByteBuffer.allocateDirect((int) (N * 4)).order(ByteOrder.nativeOrder());
                backend.download(out, recv[r].address());
                for (int i = 0; i < N * 4; i++) {
                    assertEquals(POISON, out.get(i), "rank " + r + " byte " + i + ": nothing of the group ran");
                }
            }
        } finally {
            for (int r = 0; r < 2; r++) {
                streams[r].close();
                send[r].close();
                recv[r].close();
                world[r].close();
            }
        }
    }

    @Test
    void aDatatypeTheFacadeRefusesCancelsTheGroup() {
        refusedCallCancelsTheGroup(99, ncclSum, false, "datatype 99");
    }

    @Test
    void anOpTheFacadeRefusesCancelsTheGroup() {
        refusedCallCancelsTheGroup(ncclFloat32, 1234, false, "op 1234");
    }

    @Test
    void aHandleThatIsNoCommunicatorCancelsTheGroup() {
        refusedCallCancelsTheGroup(ncclFloat32, ncclSum, true, "an unknown handle");
    }
}
