package io.flexlink.cuda;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Reduction;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.nio.IntBuffer;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;

/**
 * The hot path of {@link FlexNccl}'s collectives: handle lookup, stream wrapper lookup, the FlexLink
 * call, error codes. Nothing here allocates on success. The thread's current device is re-read on
 * entry (the caller may have changed it) and restored on exit if a launch had to switch it.
 */
final class FacadeCalls {
    private static final ThreadLocal<int[]> SCRATCH_INT = ThreadLocal.withInitial(() -> new int[1]);

    private FacadeCalls() {
    }

    /** NCCL's name of a collective's call. */
    private static String name(Collective c) {
        return "nccl" + c.displayName();
    }

    /** One collective (or, for SEND/RECV, one half of a transfer: {@code root} is the peer). */
    static int collective(Collective which, Pointer sendbuff, Pointer recvbuff, long count, int datatype, int op,
                          int root, ncclComm comm, CUstream_st stream) {
        FacadeComm c = NcclFacade.lookup(comm);
        int pending = 0;
        if (c == null && (c = madeMeanwhile(comm, pending = FacadePending.code(comm))) == null) {
            int code = FacadePending.forUse(name(which), pending); // in progress, its creation's error, or unknown
            FlexLink.groupFailed(new FlexLinkException(Result.fromCode(code), name(which) + ": comm 0x"
                    + Long.toHexString(comm == null ? 0 : comm.address()) + " is no usable communicator"));
            return code;
        }
        int entry = -1;
        try {
            DataType t = DataType.fromCode(datatype);
            Reduction o = which.reduces() ? c.ops.reduction(op, t) : ReduceOp.SUM; // a PreMulSum's code: this comm's
            entry = Devices.refresh(); // after the arguments: a bad one is ncclInvalidArgument without a CUDA call
            CudaStream s = c.stream(stream);
            long send = NcclFacade.address(sendbuff);
            long recv = NcclFacade.address(recvbuff);
            Communicator x = c.comm;
            switch (which) {
                case ALL_REDUCE: x.allReduce(send, recv, count, t, o, s); break;
                case ALL_GATHER: x.allGather(send, recv, count, t, s); break;
                case REDUCE_SCATTER: x.reduceScatter(send, recv, count, t, o, s); break;
                case BROADCAST: x.broadcast(send, recv, count, t, root, s); break;
                case REDUCE: x.reduce(send, recv, count, t, o, root, s); break;
                case ALL_TO_ALL: x.allToAll(send, recv, count, t, s); break;
                case GATHER: x.gather(send, recv, count, t, root, s); break;
                case SCATTER: x.scatter(send, recv, count, t, root, s); break;
                case SEND: x.send(send, count, t, root, s); break;
                default: x.recv(recv, count, t, root, s);
            }
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            // the facade's own checks (datatype, op, stream) cancel the group too, as NCCL's ncclGroupErrCheck
            FlexLink.groupFailed(e);
            return NcclFacade.failed(name(which), e);
        } catch (RuntimeException | LinkageError e) {
            FlexLink.groupFailed(new FlexLinkException(Result.INTERNAL_ERROR, name(which) + ": " + e, e));
            return NcclFacade.internal(name(which), e);
        } finally {
            restore(entry);
        }
    }

    /**
     * After a miss in the table: the communicator when its creation finished meanwhile ({@code pending}, read
     * after the miss, says no creation is pending: a finished one is put into the table before it leaves).
     */
    private static FacadeComm madeMeanwhile(Pointer comm, int pending) {
        return pending == Result.INVALID_ARGUMENT.code() ? NcclFacade.lookup(comm) : null;
    }

    /** Queries of a communicator: 0 async error, 1 count, 2 device, 3 rank. */
    private static int query(ncclComm comm, int what) {
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null) {
            return -1;
        }
        switch (what) {
            case 0: {
                int ending = FacadeEnds.state(c); // a background finalize or revoke, or a failed one
                if (ending >= 0) {
                    return ending;
                }
                int code = c.comm.getAsyncError().code();
                if (code == Result.SUCCESS.code() && c.nccl != null) {
                    int[] t = SCRATCH_INT.get();
                    int rc = c.nccl.asyncError(t);
                    code = rc != Result.SUCCESS.code() ? rc : t[0];
                }
                return code;
            }
            case 1: return c.comm.size();
            case 2: return c.device;
            default: return c.comm.rank();
        }
    }

    /**
     * True when {@code out} (an {@code int[]}, {@link IntBuffer} or {@link IntPointer}) can take one int at
     * its start: not null, not a NULL pointer, not empty or read-only. NCCL answers ncclInvalidArgument
     * for a NULL output; the facade does the same rather than throw.
     */
    static boolean writable(Object out) {
        if (out instanceof int[]) {
            return ((int[]) out).length >= 1;
        }
        if (out instanceof IntBuffer) {
            IntBuffer b = (IntBuffer) out;
            return b.hasRemaining() && !b.isReadOnly();
        }
        return out instanceof IntPointer && ((IntPointer) out).address() != 0;
    }

    static int answer(ncclComm comm, int what, Object out) {
        if (!writable(out)) {
            return Result.INVALID_ARGUMENT.code();
        }
        int v;
        try {
            int pending = 0;
            if (NcclFacade.lookup(comm) == null
                    && madeMeanwhile(comm, pending = FacadePending.code(comm)) == null) {
                if (pending == Result.INVALID_ARGUMENT.code() || what != 0) {
                    return FacadePending.forUse("ncclComm query", pending); // a count or rank of one being made
                }
                v = pending; // its async error: ncclInProgress, then its creation's error
            } else {
                // a count, device or rank answers the communicator's async error first, as NCCL's
                int error = what == 0 ? Result.SUCCESS.code() : query(comm, 0);
                if (error > 0) {
                    return FacadePending.forUse("ncclComm query", error);
                }
                v = query(comm, what);
            }
        } catch (FlexLinkException e) {
            return NcclFacade.failed("ncclComm query", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal("ncclComm query", e);
        }
        if (v < 0) {
            return Result.INVALID_ARGUMENT.code();
        }
        if (out instanceof int[]) {
            ((int[]) out)[0] = v;
        } else if (out instanceof IntBuffer) {
            IntBuffer b = (IntBuffer) out;
            b.put(b.position(), v);
        } else {
            ((IntPointer) out).put(0, v);
        }
        return Result.SUCCESS.code();
    }

    private static void restore(int entry) {
        if (entry >= 0 && Devices.current() != entry) {
            Devices.use(entry);
        }
    }
}
