package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Registration;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.util.concurrent.atomic.AtomicLong;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * {@link FlexNccl}'s ncclMemAlloc and ncclMemFree (NCCL's own allocator, called through bytedeco: memory NCCL can
 * register and map for NVLS and its peers), and ncclCommRegister and ncclCommDeregister over
 * {@link io.flexlink.Communicator#register}: a registration handle is a tagged value (like a communicator's
 * handle, not an address) kept in its communicator's table, so that a handle of another communicator, or one
 * deregistered already, is found in no table (NCCL's "Could not find handle", ncclInvalidUsage).
 */
final class FacadeRegistration {
    /** Bits 48-63 as a communicator handle's, bit 44 set: never an address, never a communicator's handle. */
    private static final long HANDLE_TAG = NcclFacade.HANDLE_TAG | 0x1000_0000_0000L;
    private static final AtomicLong NEXT = new AtomicLong(1);

    private FacadeRegistration() {
    }

    /** {@code ncclMemAlloc(void** ptr, size)} in either of bytedeco's forms; a NULL {@code ptr} is ncclInvalidArgument. */
    static int memAlloc(Pointer ptr, long size) {
        if (ptr == null || ptr instanceof PointerPointer && ptr.address() == 0) {
            return NcclFacade.failed("ncclMemAlloc", invalid("ptr: NULL"));
        }
        try {
            if (!CudaLibraries.ncclAvailable()) {
                return NcclFacade.failed("ncclMemAlloc", new FlexLinkException(Result.SYSTEM_ERROR,
                        CudaLibraries.ncclUnavailableReason()));
            }
            int rc = ptr instanceof PointerPointer<?> pp ? nccl.ncclMemAlloc(pp, size) : nccl.ncclMemAlloc(ptr, size);
            NcclFacade.LOG.debug("INIT ncclMemAlloc {} B: {}", size, rc);
            return rc;
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclMemAlloc", e);
        }
    }

    /** {@code ncclMemFree}: NULL is nothing to free (NCCL hands it to cudaFree, which does nothing either). */
    static int memFree(Pointer ptr) {
        if (NcclFacade.address(ptr) == 0) {
            return Result.SUCCESS.code();
        }
        try {
            if (!CudaLibraries.ncclAvailable()) {
                return NcclFacade.failed("ncclMemFree", new FlexLinkException(Result.SYSTEM_ERROR,
                        CudaLibraries.ncclUnavailableReason()));
            }
            return nccl.ncclMemFree(ptr);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclMemFree", e);
        }
    }

    /** {@code ncclCommRegister}; {@code out} is the {@code void** handle} (a PointerPointer, or a Pointer set in place). */
    static int register(Pointer comm, Pointer buff, long size, Pointer out) {
        if (out == null || out instanceof PointerPointer && out.address() == 0) {
            return NcclFacade.failed("ncclCommRegister", invalid("handle: NULL"));
        }
        write(out, 0);
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null && (c = madeMeanwhile(comm)) == null) {
            return unknown("ncclCommRegister", comm);
        }
        long address = NcclFacade.address(buff);
        if (address == 0) {
            return NcclFacade.failed("ncclCommRegister (" + c.label + ")", invalid("buff: NULL"));
        }
        try {
            Registration r = c.comm.register(address, size);
            long handle = HANDLE_TAG | NEXT.getAndIncrement();
            c.registrations.put(handle, r);
            write(out, handle);
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommRegister (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommRegister (" + c.label + ")", e);
        }
    }

    /**
     * {@code ncclCommDeregister}: a NULL handle is nothing to deregister, as in NCCL (it is what NCCL's
     * ncclCommRegister hands out where registration is off); a handle this communicator does not hold is
     * ncclInvalidUsage, NCCL's code for a handle it cannot find.
     */
    static int deregister(Pointer comm, Pointer handle) {
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null && (c = madeMeanwhile(comm)) == null) {
            return unknown("ncclCommDeregister", comm);
        }
        long h = NcclFacade.address(handle);
        if (h == 0) {
            return Result.SUCCESS.code();
        }
        Registration r = c.registrations.remove(h);
        if (r == null) {
            return NcclFacade.failed("ncclCommDeregister (" + c.label + ")", new FlexLinkException(
                    Result.INVALID_USAGE, "handle: 0x" + Long.toHexString(h) + " is no registration of this "
                    + "communicator (deregistered already, or another communicator's)"));
        }
        try {
            r.close();
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommDeregister (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommDeregister (" + c.label + ")", e);
        }
    }

    /** A communicator whose non-blocking creation finished after the first lookup missed, or null. */
    static FacadeComm madeMeanwhile(Pointer comm) {
        return FacadePending.code(comm) == Result.INVALID_ARGUMENT.code() ? NcclFacade.lookup(comm) : null;
    }

    /** A communicator not in the table: its creation's state (ncclInProgress, its error), or ncclInvalidArgument. */
    static int unknown(String call, Pointer comm) {
        int pending = FacadePending.code(comm);
        if (pending != Result.INVALID_ARGUMENT.code()) {
            return FacadePending.forUse(call, pending);
        }
        return NcclFacade.failed(call, invalid("comm: " + (comm == null || comm.address() == 0 ? "NULL"
                : "0x" + Long.toHexString(comm.address()) + " is no communicator (destroyed, or never made)")));
    }

    private static void write(Pointer out, long handle) {
        if (out instanceof PointerPointer) {
            UNSAFE.putLong(out.address() + 8L * out.position(), handle);
        } else {
            NcclFacade.setAddress(out, handle);
        }
    }

    private static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }
}
