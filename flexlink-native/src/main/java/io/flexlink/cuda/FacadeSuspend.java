package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.nio.LongBuffer;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.LongPointer;

/**
 * {@link FlexNccl}'s ncclCommSuspend, ncclCommResume and ncclCommMemStats (NCCL 2.30). NCCL's suspend releases the
 * communicator's dynamic GPU memory until a resume; FlexLink cannot: its paths keep their staging, scratch and NCCL
 * communicator until ncclCommDestroy, and a collective may use any of them. So a well-formed suspend is
 * ncclInvalidUsage saying so (the communicator stays usable), a resume is ncclInvalidUsage (none is ever
 * suspended), and the statistics say that: nothing suspendable, never suspended. The GPU memory counted is NCCL's,
 * of the primary path's NCCL communicator, asked of the NCCL library (2.30 or later: older is ncclInvalidUsage naming
 * both versions); FlexLink's own paths' memory is not counted per communicator, so a communicator without NCCL's path
 * has no figure to give (ncclInvalidUsage saying why). Arguments are checked first, as NCCL's: a NULL communicator or
 * output, a flag or statistic NCCL does not define, are ncclInvalidArgument naming it.
 */
final class FacadeSuspend {
    private FacadeSuspend() {
    }

    static int suspend(ncclComm comm, int flags) {
        String call = "ncclCommSuspend";
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null) {
            return missing(call, comm);
        }
        if ((flags & ~FlexNcclConstants.NCCL_SUSPEND_MEM) != 0) {
            return NcclFacade.failed(call + " (" + c.label + ")", invalid("flags: 0x" + Integer.toHexString(flags)
                    + " (NCCL_SUSPEND_MEM, 0x1, is the only flag)"));
        }
        return NcclFacade.failed(call + " (" + c.label + ")", new FlexLinkException(Result.INVALID_USAGE,
                "FlexLink cannot suspend a communicator: its paths keep their staging, scratch and NCCL communicator "
                        + "until ncclCommDestroy, and any collective may use them; the communicator stays usable"));
    }

    static int resume(ncclComm comm) {
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null) {
            return missing("ncclCommResume", comm);
        }
        return NcclFacade.failed("ncclCommResume (" + c.label + ")", new FlexLinkException(Result.INVALID_USAGE,
                "comm: not suspended (FlexLink never suspends a communicator: ncclCommSuspend is ncclInvalidUsage)"));
    }

    /** {@code value} is a {@code long[]}, {@link LongBuffer} or {@link LongPointer} (bytedeco's three forms). */
    static int memStats(ncclComm comm, int stat, Object value) {
        String call = "ncclCommMemStats";
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null) {
            return missing(call, comm);
        }
        call += " (" + c.label + ")";
        if (!FacadeParams.writable(value)) {
            return NcclFacade.failed(call, invalid("value: NULL"));
        }
        if (stat < FlexNcclConstants.ncclStatGpuMemSuspend || stat > FlexNcclConstants.ncclStatGpuMemTotal) {
            return NcclFacade.failed(call, invalid("stat: " + stat + " (ncclStatGpuMemSuspend, 0, to "
                    + "ncclStatGpuMemTotal, 3)"));
        }
        long v;
        try {
            v = stat == FlexNcclConstants.ncclStatGpuMemSuspend || stat == FlexNcclConstants.ncclStatGpuMemSuspended
                    ? 0 : ncclBytes(c); // nothing is suspendable, nothing suspended; NCCL's memory all persists
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call, e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call, e);
        }
        if (value instanceof long[] a) {
            a[0] = v;
        } else if (value instanceof LongBuffer b) {
            b.put(b.position(), v);
        } else {
            ((LongPointer) value).put(0, v);
        }
        return Result.SUCCESS.code();
    }

    /** The GPU memory NCCL counts for the primary's NCCL communicator (ncclStatGpuMemTotal), asked of NCCL. */
    private static long ncclBytes(FacadeComm c) {
        if (c.nccl == null) {
            throw new FlexLinkException(Result.INVALID_USAGE, "comm: FlexLink does not count its own paths' GPU memory "
                    + "(staging, scratch) per communicator, and this one has no NCCL path whose memory NCCL counts "
                    + "(the host backend, several ranks on one GPU, or a communicator over several nodes)");
        }
        if (c.end.get() != -1) {
            throw new FlexLinkException(Result.INVALID_USAGE, "comm: finalized or revoked (NCCL's communicator "
                    + "underneath may be freed already)");
        }
        Result failed = c.comm.getAsyncError();
        if (failed != Result.SUCCESS && failed != Result.IN_PROGRESS) {
            throw new FlexLinkException(failed, "comm: failed (" + failed.description() + "); its NCCL communicator "
                    + "may be aborted");
        }
        NcclVersions.need(NcclVersions.V2_30, "ncclCommMemStats");
        long[] out = new long[1];
        int rc = nccl.ncclCommMemStats(c.nccl.handle(), FlexNcclConstants.ncclStatGpuMemTotal, out);
        if (rc != Result.SUCCESS.code()) {
            throw NcclErrors.error(rc, "ncclCommMemStats of the primary's NCCL communicator", c.nccl.handle());
        }
        return out[0];
    }

    /** A NULL communicator is ncclInvalidArgument; one being made, failed or unknown answers as its creation says. */
    private static int missing(String call, ncclComm comm) {
        if (comm == null || comm.address() == 0) {
            return NcclFacade.failed(call, invalid("comm: NULL"));
        }
        int code = FacadePending.code(comm);
        return code != Result.INVALID_ARGUMENT.code() ? FacadePending.forUse(call, code)
                : NcclFacade.failed(call, invalid("comm: not a communicator (destroyed, or never made)"));
    }

    private static FlexLinkException invalid(String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, why);
    }
}
