package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.flexlink.FlexLink;
import io.flexlink.Registration;
import java.util.List;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Test;

/**
 * ncclCommRegister and ncclCommDeregister on host-backend communicators registered as facade handles (no CUDA
 * needed): both handle forms, NCCL's codes for every bad input, the handles' end with ncclCommDestroy; and
 * ncclMemAlloc and ncclMemFree's answers where NCCL is absent.
 */
class FacadeRegistrationTest extends FacadeBufferRanks {
    private static String lastError() {
        return ncclGetLastError(null).getString();
    }

    @Test
    void bothHandleFormsRegisterAndDeregisterOnce() {
        Pointer buff = at(mem[0].address());
        Pointer handle = new Pointer();
        assertEquals(ncclSuccess, ncclCommRegister(h[0], buff, 4096, handle));
        assertNotEquals(0, handle.address());
        try (PointerPointer<Pointer> slot = new PointerPointer<>(1)) {
            assertEquals(ncclSuccess, ncclCommRegister(h[0], at(mem[0].address() + 512), 512, slot));
            Pointer second = slot.get(0);
            assertNotEquals(0, second.address());
            assertNotEquals(handle.address(), second.address(), "a handle per registration, overlapping or not");
            List<Registration> regs = world[0].registrations();
            assertEquals(2, regs.size());
            assertEquals(mem[0].address(), regs.get(0).address());
            assertFalse(regs.get(0).withPrimary(), "the host ring: FlexLink's record only");
            assertEquals(ncclSuccess, ncclCommDeregister(h[0], second));
        }
        assertEquals(ncclInvalidUsage, ncclCommDeregister(h[1], handle), "another communicator's handle");
        assertTrue(lastError().contains("handle"), lastError());
        assertEquals(ncclSuccess, ncclCommDeregister(h[0], handle));
        assertEquals(ncclInvalidUsage, ncclCommDeregister(h[0], handle), "twice");
        assertEquals(List.of(), world[0].registrations());
        // NULL is what NCCL hands out where registration is off; deregistering it is nothing, as in NCCL
        assertEquals(ncclSuccess, ncclCommDeregister(h[0], null));
        assertEquals(ncclSuccess, ncclCommDeregister(h[0], new Pointer()));
    }

    @Test
    void everyBadInputHasNcclsCode() {
        Pointer buff = at(mem[0].address());
        Pointer handle = new Pointer();
        ncclComm unknown = new ncclComm();
        NcclFacade.setAddress(unknown, NcclFacade.HANDLE_TAG | 0x7FFF_FFE0L); // never handed out
        assertEquals(ncclInvalidArgument, ncclCommRegister(null, buff, 64, handle));
        assertEquals(ncclInvalidArgument, ncclCommRegister(new ncclComm(), buff, 64, handle));
        assertEquals(ncclInvalidArgument, ncclCommRegister(unknown, buff, 64, handle));
        assertTrue(lastError().contains("comm"), lastError());
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], null, 64, handle));
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], new Pointer(), 64, handle));
        assertTrue(lastError().contains("buff"), lastError());
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], buff, 0, handle));
        assertTrue(lastError().contains("bytes"), lastError());
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], buff, -1, handle), "a size_t past the address space");
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], buff, 4097, handle), "past the allocation");
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], at(mem[1].address()), 64, handle), "rank 1's device");
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], buff, 64, (Pointer) null));
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], buff, 64, (PointerPointer) null));
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[0], buff, 64, new PointerPointer<>()));
        assertTrue(lastError().contains("handle"), lastError());
        assertEquals(0, handle.address(), "NULL after a refusal");
        assertEquals(ncclInvalidArgument, ncclCommDeregister(null, handle));
        assertEquals(ncclInvalidArgument, ncclCommDeregister(unknown, handle));
        assertEquals(ncclInvalidUsage, ncclCommDeregister(h[0], at(NcclFacade.HANDLE_TAG | 0x1234)), "never given out");
        assertEquals(List.of(), world[0].registrations(), "nothing recorded");
        NcclFacade.setAddress(unknown, 0);
    }

    @Test
    void destroyDeregistersAndTheCommunicatorIsGone() {
        Pointer handle = new Pointer();
        assertEquals(ncclSuccess, ncclCommRegister(h[1], at(mem[1].address()), 4096, handle));
        Registration r = world[1].registrations().get(0);
        assertEquals(ncclSuccess, ncclCommDestroy(h[1]));
        assertTrue(r.isClosed(), "deregistered with the communicator");
        assertEquals(ncclInvalidArgument, ncclCommDeregister(h[1], handle), "a destroyed communicator");
        assertEquals(ncclInvalidArgument, ncclCommRegister(h[1], at(mem[1].address()), 64, handle));
    }

    @Test
    void memAllocAndFreeAnswerWithCodes() {
        assertEquals(ncclInvalidArgument, ncclMemAlloc((Pointer) null, 64));
        assertEquals(ncclInvalidArgument, ncclMemAlloc((PointerPointer) null, 64));
        assertEquals(ncclInvalidArgument, ncclMemAlloc(new PointerPointer<>(), 64));
        assertTrue(lastError().contains("ptr"), lastError());
        assertEquals(ncclSuccess, ncclMemFree(null), "freeing NULL is nothing, as cudaFree's");
        assertEquals(ncclSuccess, ncclMemFree(new Pointer()));
        assumeFalse(CudaLibraries.ncclAvailable(), "NCCL is here: FacadeRegistrationGpuTest allocates for real");
        Pointer p = new Pointer();
        assertEquals(ncclSystemError, ncclMemAlloc(p, 64));
        assertEquals(0, p.address());
        assertEquals(ncclSystemError, ncclMemFree(at(0x1000)));
    }
}
