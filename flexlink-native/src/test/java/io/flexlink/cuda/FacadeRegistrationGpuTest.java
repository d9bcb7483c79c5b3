package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static io.flexlink.cuda.facade.NcclProgram.*;
import static org.bytedeco.cuda.global.cudart.cudaSetDevice;
import static org.bytedeco.cuda.global.cudart.cudaStreamCreate;
import static org.bytedeco.cuda.global.cudart.cudaStreamDestroy;
import static org.bytedeco.cuda.global.cudart.cudaStreamSynchronize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Registration;
import java.util.List;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue #17's memory functions on a GPU: NCCL's allocator, a one-rank FlexNccl communicator that registers the
 * buffers with its NCCL primary path, an AllReduce on them into a poisoned output, every element checked.
 */
@Tag("gpu")
class FacadeRegistrationGpuTest {
    @Test
    @SuppressWarnings("rawtypes")
    void memAllocRegisterAllReduceDeregisterFree() {
        GpuTests.assumeCuda();
        int n = (1 << 20) + 3;
        cuda(cudaSetDevice(0), "cudaSetDevice");
        PointerPointer comms = new PointerPointer(1);
        nccl(ncclCommInitAll(comms, 1, new int[] {0}), "ncclCommInitAll");
        ncclComm comm = new ncclComm(comms.get(0));
        CUstream_st stream = new CUstream_st();
        cuda(cudaStreamCreate(stream), "cudaStreamCreate");
        Pointer send = new Pointer();
        nccl(ncclMemAlloc(send, 4L * n), "ncclMemAlloc (Pointer)");
        PointerPointer slot = new PointerPointer(1);
        nccl(ncclMemAlloc(slot, 4L * n), "ncclMemAlloc (PointerPointer)");
        Pointer recv = slot.get(0);
        assertNotEquals(0, send.address());
        assertNotEquals(0, recv.address());
        float[] data = randomInts(n, 0x5EED0017L);
        upload(send, data);
        upload(recv, poison(n));

        Pointer sendHandle = new Pointer();
        nccl(ncclCommRegister(comm, send, 4L * n, sendHandle), "ncclCommRegister (Pointer)");
        PointerPointer recvHandle = new PointerPointer(1);
        nccl(ncclCommRegister(comm, recv, 4L * n, recvHandle), "ncclCommRegister (PointerPointer)");
        List<Registration> regs = NcclFacade.lookup(comm).comm.registrations();
        assertEquals(2, regs.size());
        assertTrue(regs.get(0).withPrimary() && regs.get(1).withPrimary(), "NCCL, the primary path, registered both");

        nccl(ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comm, stream), "ncclAllReduce");
        cuda(cudaStreamSynchronize(stream), "sync");
        expect(data, hostFloats(recv, n), "allReduce on registered buffers (one rank: a copy)");

        nccl(ncclCommDeregister(comm, sendHandle), "ncclCommDeregister");
        nccl(ncclCommDeregister(comm, recvHandle.get(0)), "ncclCommDeregister");
        assertEquals(ncclInvalidUsage, ncclCommDeregister(comm, sendHandle), "a second deregistration");
        assertEquals(List.of(), NcclFacade.lookup(comm).comm.registrations());
        nccl(ncclMemFree(send), "ncclMemFree");
        nccl(ncclMemFree(recv), "ncclMemFree");
        cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
        nccl(ncclCommDestroy(comm), "ncclCommDestroy");
        slot.close();
        recvHandle.close();
        comms.close();
    }
}
