package io.flexlink.cuda;

import java.nio.LongBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * {@link FlexNccl}'s mirrors of NCCL's functions of a communicator's memory: NCCL's allocator, buffer registration,
 * and NCCL 2.30's suspension and memory statistics, with bytedeco's overloads. {@code FlexNccl} extends this class
 * (which extends {@link FlexNcclParams}, then {@link FlexNcclConstants}): {@code FlexNccl.ncclMemAlloc} and the
 * static import of {@code FlexNccl.*} find them where bytedeco's are. Declared apart to keep {@code FlexNccl} within
 * its size.
 */
@SuppressWarnings("rawtypes")
public abstract class FlexNcclMemory extends FlexNcclParams {
    FlexNcclMemory() {
    }

    // ---- NCCL's allocator, and buffer registration (FacadeRegistration; docs/migration.md says what it does) ----

    /** {@code size} bytes of device memory on the current device, from NCCL's own allocator (cuMem, as NCCL's). */
    public static int ncclMemAlloc(PointerPointer ptr, long size) {
        return FacadeRegistration.memAlloc(ptr, size);
    }
    public static int ncclMemAlloc(Pointer ptr, long size) {
        return FacadeRegistration.memAlloc(ptr, size);
    }
    public static int ncclMemFree(Pointer ptr) {
        return FacadeRegistration.memFree(ptr);
    }

    /** Registers the buffer with the communicator, and with NCCL where NCCL is its primary path; local to the rank. */
    public static int ncclCommRegister(ncclComm comm, Pointer buff, long size, PointerPointer handle) {
        return FacadeRegistration.register(comm, buff, size, handle);
    }
    public static int ncclCommRegister(ncclComm comm, Pointer buff, long size, Pointer handle) {
        return FacadeRegistration.register(comm, buff, size, handle);
    }
    public static int ncclCommDeregister(ncclComm comm, Pointer handle) {
        return FacadeRegistration.deregister(comm, handle);
    }

    // ---- suspension and memory statistics (FacadeSuspend; docs/migration.md says what FlexLink can give) ----

    /** ncclInvalidUsage: FlexLink cannot release a communicator's memory while it lives (it stays usable). */
    public static int ncclCommSuspend(ncclComm comm, int flags) {
        return FacadeSuspend.suspend(comm, flags);
    }

    /** ncclInvalidUsage: no communicator is ever suspended. */
    public static int ncclCommResume(ncclComm comm) {
        return FacadeSuspend.resume(comm);
    }

    /** Nothing suspendable or suspended; persistent and total GPU memory: NCCL's, of the primary's NCCL communicator. */
    public static int ncclCommMemStats(ncclComm comm, int stat, LongPointer value) {
        return FacadeSuspend.memStats(comm, stat, value);
    }
    public static int ncclCommMemStats(ncclComm comm, int stat, LongBuffer value) {
        return FacadeSuspend.memStats(comm, stat, value);
    }
    public static int ncclCommMemStats(ncclComm comm, int stat, long[] value) {
        return FacadeSuspend.memStats(comm, stat, value);
    }
}
