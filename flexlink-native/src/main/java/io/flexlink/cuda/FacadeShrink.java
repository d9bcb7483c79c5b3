package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.nio.IntBuffer;
import java.util.function.LongConsumer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * {@code ncclCommShrink} behind {@link FlexNccl}: the arguments read and checked as NCCL checks them (a NULL
 * communicator, list or output and a count below 1 are ncclInvalidArgument; so are, here, a rank out of range or
 * twice, every rank, unknown flag bits and a bad config, each naming the argument), then
 * {@link io.flexlink.Communicator#shrink} through {@link FacadeSplit} (grouped, blocking or in the background
 * like a split). A NULL {@code config} inherits the parent's blocking and commName, as NCCL's child does.
 * Unlike NCCL, the excluded ranks call it too, with the same list, and get NULL: the split under it is
 * collective over every rank of the parent.
 */
final class FacadeShrink {
    /** NCCL_SHRINK_DEFAULT and NCCL_SHRINK_ABORT: the only flags. */
    static final int ABORT = 1;

    private FacadeShrink() {
    }

    /** The list as ints; {@code list} is an {@code int[]}, {@link IntBuffer} or {@link IntPointer}; null when NULL. */
    static int[] ranks(Object list, int count) {
        if (list == null || count < 1) {
            return null;
        }
        int[] out = new int[count];
        if (list instanceof int[] a) {
            if (a.length < count) {
                throw invalid("excludeRanksCount: " + count + " is more than the " + a.length + " ranks of the list");
            }
            System.arraycopy(a, 0, out, 0, count);
        } else if (list instanceof IntBuffer b) {
            if (b.remaining() < count) {
                throw invalid("excludeRanksCount: " + count + " is more than the " + b.remaining() + " ranks left in "
                        + "the buffer");
            }
            for (int i = 0; i < count; i++) {
                out[i] = b.get(b.position() + i);
            }
        } else {
            IntPointer p = (IntPointer) list;
            if (p.address() == 0) {
                return null;
            }
            long at = p.address() + 4L * p.position();
            for (int i = 0; i < count; i++) {
                out[i] = UNSAFE.getInt(at + 4L * i);
            }
        }
        return out;
    }

    /** ncclCommShrink into an {@link ncclComm} or the {@code ncclComm_t*} slot of a {@link PointerPointer}. */
    static int shrink(ncclComm comm, Object list, int count, Pointer newcomm, Pointer config, int flags) {
        if (newcomm == null || (newcomm instanceof PointerPointer && newcomm.address() == 0)) {
            return Result.INVALID_ARGUMENT.code();
        }
        return shrink(comm, list, count, newcomm instanceof PointerPointer pp ? FacadeSplit.into(pp)
                : FacadeSplit.into((ncclComm) newcomm), config, flags);
    }

    /** One rank's ncclCommShrink; {@code out} gets NULL at once, then the child's handle. */
    static int shrink(ncclComm comm, Object list, int count, LongConsumer out, Pointer config, int flags) {
        try {
            FacadeComm parent = NcclFacade.lookup(comm); // before NULL goes out: newcomm may be comm's own object
            out.accept(0); // NULL until the child is made, as NCCL's
            if (parent == null) {
                throw invalid("comm: " + (comm == null || comm.address() == 0 ? "NULL"
                        : "not a FlexNccl communicator"));
            }
            int[] excluded = ranks(list, count);
            if (excluded == null) {
                throw invalid(count < 1 ? "excludeRanksCount: " + count + " (at least 1)" : "excludeRanksList: NULL");
            }
            if ((flags & ~ABORT) != 0) {
                throw invalid("shrinkFlags: 0x" + Integer.toHexString(flags) + " (NCCL_SHRINK_DEFAULT or "
                        + "NCCL_SHRINK_ABORT)");
            }
            io.flexlink.validate.Validator.checkExcluded(excluded, parent.comm.size()); // nothing starts on a bad list
            FacadeOptions options = FacadeOptions.child(parent, config);
            boolean none = false;
            for (int r : excluded) {
                none |= r == parent.comm.rank();
            }
            boolean abortFirst = (flags & ABORT) != 0;
            return FacadeSplit.start(parent, c -> c.shrink(excluded, abortFirst), out, options, "ncclCommShrink",
                    none);
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclCommShrink", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclCommShrink", e);
        }
    }

    private static FlexLinkException invalid(String why) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, why);
    }
}
