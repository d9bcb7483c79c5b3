package io.flexlink.cuda;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank's NCCL communicator. Calls map to NCCL directly, through reused raw-address wrappers (no
 * allocation per call). Used by one thread at a time: FlexLink's communicator serializes its calls.
 *
 * <p>AllGather and ReduceScatter with a stride other than the count (FlexLink split a slice off each
 * rank block, so the primary slice is strided in the gathered buffer) are done one of two ways:
 * <ol>
 *   <li>(roots) one grouped {@code ncclBroadcast} per root into {@code recv + r * stride}, resp. one
 *       grouped {@code ncclReduce} per root from {@code send + r * stride}: no extra copy, n
 *       collectives of 1/n the size;</li>
 *   <li>(scratch) {@code ncclAllGather} into contiguous device scratch and one strided
 *       {@code cudaMemcpy2DAsync} into place (resp. a strided copy into scratch, then
 *       {@code ncclReduceScatter}): NCCL's native algorithm plus one extra pass over the slice in HBM.</li>
 * </ol>
 * {@link #STRIDED_BY_ROOTS} picks one. At one rank, the only count the lent H200 allows, (1) took 0.009 /
 * 0.013 / 0.133 ms and (2) 0.012 / 0.024 / 0.262 ms for a 1 / 16 / 256 MB slice (CudaMeasurements): (1)
 * is a copy, (2) a copy plus the 2D copy. The real trade-off (n collectives of 1/n the size against one
 * extra HBM pass at ~4 TB/s) needs 8 GPUs; until measured there, (1) stays: it adds no HBM traffic and
 * no scratch. (2) is limited by cudaMemcpy2D's maximum pitch (stride * element size).
 */
final class NcclComm implements PrimaryComm {
    private static final Logger LOG = LoggerFactory.getLogger(NcclComm.class);

    /** True: grouped broadcasts/reduces per root; false: NCCL's collective through scratch + a 2D copy. */
    static final boolean STRIDED_BY_ROOTS = true;
    /** What new communicators use; tests and measurements flip it to exercise the other variant. */
    static volatile boolean stridedDefault = STRIDED_BY_ROOTS;

    private final ncclComm comm;
    private final int rank;
    private final int size;
    private final int device;
    private final RawPointer sendPtr = new RawPointer();
    private final RawPointer recvPtr = new RawPointer();
    private final Scratch scratch;
    private boolean stridedByRoots = stridedDefault;
    private volatile boolean aborted;
    private volatile boolean closed;

    NcclComm(CudaBackend backend, ncclComm comm, int rank, int size, int device) {
        this.comm = comm;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.scratch = new Scratch(backend, device);
    }

    ncclComm handle() {
        return comm;
    }

    int device() {
        return device;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    private static CUstream_st stream(RuntimeStream s) {
        return ((CudaStream) s).handle();
    }

    private void check(int rc, String what) {
        if (rc != nccl.ncclSuccess) {
            throw NcclErrors.error(rc, what + " (rank " + rank + "/" + size + ")", comm);
        }
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
        check(nccl.ncclAllReduce(sendPtr.set(send), recvPtr.set(recv), count, type.code(), op.code(), comm,
                stream(stream)), "ncclAllReduce");
    }

    @Override
    public void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        CUstream_st s = stream(stream);
        int sz = type.size();
        if (stride == count) {
            check(nccl.ncclAllGather(sendPtr.set(send), recvPtr.set(recv), count, type.code(), comm, s), "ncclAllGather");
        } else if (stridedByRoots) {
            group(true);
            try {
                for (int r = 0; r < size; r++) {
                    check(nccl.ncclBroadcast(sendPtr.set(send), recvPtr.set(recv + r * stride * sz), count, type.code(),
                            r, comm, s), "ncclBroadcast(root " + r + ")");
                }
            } finally {
                group(false);
            }
        } else {
            long tmp = scratch.ensure(size * count * sz);
            check(nccl.ncclAllGather(sendPtr.set(send), recvPtr.set(tmp), count, type.code(), comm, s), "ncclAllGather");
            copy2D(recv, stride * sz, tmp, count * sz, count * sz, s);
        }
    }

    @Override
    public void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op,
                              RuntimeStream stream) {
        CUstream_st s = stream(stream);
        int sz = type.size();
        if (stride == count) {
            check(nccl.ncclReduceScatter(sendPtr.set(send), recvPtr.set(recv), count, type.code(), op.code(), comm, s),
                    "ncclReduceScatter");
        } else if (stridedByRoots) {
            group(true);
            try {
                for (int r = 0; r < size; r++) {
                    check(nccl.ncclReduce(sendPtr.set(send + r * stride * sz), recvPtr.set(recv), count, type.code(),
                            op.code(), r, comm, s), "ncclReduce(root " + r + ")");
                }
            } finally {
                group(false);
            }
        } else {
            long tmp = scratch.ensure(size * count * sz);
            copy2D(tmp, count * sz, send, stride * sz, count * sz, s);
            check(nccl.ncclReduceScatter(sendPtr.set(tmp), recvPtr.set(recv), count, type.code(), op.code(), comm, s),
                    "ncclReduceScatter");
        }
    }

    /** {@code size} rows of {@code width} bytes from pitch {@code srcPitch} to pitch {@code dstPitch}. */
    private void copy2D(long dst, long dstPitch, long src, long srcPitch, long width, CUstream_st s) {
        int rc = cudart.cudaMemcpy2DAsync(recvPtr.set(dst), dstPitch, sendPtr.set(src), srcPitch, width, size,
                cudart.cudaMemcpyDeviceToDevice, s);
        if (rc != 0) {
            throw CudaCheck.rtError(rc, "cudaMemcpy2DAsync (strided primary slice, rank " + rank + ")");
        }
    }

    private void group(boolean start) {
        if (start) {
            check(nccl.ncclGroupStart(), "ncclGroupStart");
        } else {
            check(nccl.ncclGroupEnd(), "ncclGroupEnd");
        }
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream) {
        check(nccl.ncclBroadcast(sendPtr.set(send), recvPtr.set(recv), count, type.code(), root, comm, stream(stream)),
                "ncclBroadcast");
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream) {
        check(nccl.ncclReduce(sendPtr.set(send), recvPtr.set(recv), count, type.code(), op.code(), root, comm,
                stream(stream)), "ncclReduce");
    }

    /** NCCL's point-to-point send (the NCCL facade passes ncclSend through). */
    int send(long buf, long count, int type, int peer, CUstream_st stream) {
        return nccl.ncclSend(sendPtr.set(buf), count, type, peer, comm, stream);
    }

    /** NCCL's point-to-point receive. */
    int recv(long buf, long count, int type, int peer, CUstream_st stream) {
        return nccl.ncclRecv(recvPtr.set(buf), count, type, peer, comm, stream);
    }

    /** NCCL's asynchronous error of this communicator. */
    int asyncError(int[] out) {
        return nccl.ncclCommGetAsyncError(comm, out);
    }

    private final int[] asyncOut = new int[1];

    /** NCCL's asynchronous error as FlexLink's (null while NCCL reports none); never after abort or close. */
    @Override
    public io.flexlink.FlexLinkException asyncError() {
        if (aborted || closed) {
            return null;
        }
        int rc = nccl.ncclCommGetAsyncError(comm, asyncOut);
        int code = rc != nccl.ncclSuccess ? rc : asyncOut[0];
        if (code == nccl.ncclSuccess || code == nccl.ncclInProgress) {
            return null;
        }
        return NcclErrors.error(code, "ncclCommGetAsyncError (rank " + rank + "/" + size + ")", comm);
    }

    @Override
    public void abort() {
        if (aborted || closed) {
            return;
        }
        aborted = true;
        int rc = nccl.ncclCommAbort(comm);
        if (rc != nccl.ncclSuccess) {
            LOG.warn("ncclCommAbort(rank {}/{}): {}", rank, size, NcclErrors.text(rc));
        }
    }

    /** Destroys the NCCL communicator (unless aborted, which already freed it) and the scratch; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!aborted) {
            int rc = nccl.ncclCommDestroy(comm);
            if (rc != nccl.ncclSuccess) {
                LOG.warn("ncclCommDestroy(rank {}/{}): {}", rank, size, NcclErrors.text(rc));
            }
        }
        scratch.close();
    }
}
