package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.BlockTransfers;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.ReusedScratch;
import io.flexlink.runtime.Scratch;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
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
    /** Each rank's input divided by the rank count, for an fp8 AVG (see {@link #averaged}). */
    private final ReusedScratch prescaled;
    private boolean stridedByRoots = stridedDefault;
    private final PeerOps blocks = new PeerOps();
    private volatile boolean aborted;
    private volatile boolean closed;
    private final NcclOneSided oneSided;

    NcclComm(CudaBackend backend, ncclComm comm, int rank, int size, int device) {
        this.comm = comm;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.scratch = new Scratch(backend, device);
        this.prescaled = new ReusedScratch(backend, device);
        this.oneSided = new NcclOneSided(comm, rank, size, device, () -> closed || aborted);
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

    /**
     * The operation NCCL is asked for. On one rank every reduction is a copy, and AVG is SUM there (x / 1 = x
     * exactly): NCCL 2.28 runs a one-rank AVG of a floating-point type, and every one-rank PreMulSum, through
     * a kernel that leaves the last elements unwritten when the count is not a multiple of its vector width
     * (from 64 K elements on; docs/design.md). An fp8 AVG, which NCCL refuses, is a SUM of inputs divided
     * first ({@link #averaged}).
     */
    private ReduceOp ncclOp(ReduceOp op, DataType type) {
        return op == ReduceOp.AVG && (size == 1 || isFp8(type)) ? ReduceOp.SUM : op;
    }

    private static boolean isFp8(DataType type) {
        return type == DataType.FLOAT8E4M3 || type == DataType.FLOAT8E5M2;
    }

    /**
     * The input NCCL reads: {@code send} itself, or for an fp8 AVG of several ranks each element divided by
     * the rank count into scratch (rows of {@code count} elements, {@code stride} apart), which NCCL then
     * sums: the pre-multiplied average NCCL does for the other floating-point types, where it is refused.
     */
    private long averaged(long send, long count, long stride, int rows, DataType type, ReduceOp op,
                          RuntimeStream stream) {
        if (op != ReduceOp.AVG || size == 1 || !isFp8(type)) {
            return send;
        }
        int sz = type.size();
        long tmp = prescaled.fill(rows * count * sz, stream, stream.isCapturing());
        for (int r = 0; r < rows; r++) {
            stream.scale(tmp + r * count * sz, send + r * stride * sz, count, type, 0, size);
        }
        return tmp;
    }

    /** After the collective that read an {@link #averaged} input. */
    private void averageDone(long input, long send, RuntimeStream stream) {
        if (input != send) {
            prescaled.read(stream, stream.isCapturing());
        }
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream) {
        long in = averaged(send, count, count, 1, type, op, stream);
        check(nccl.ncclAllReduce(sendPtr.set(in), recvPtr.set(recv), count, type.code(), ncclOp(op, type).code(),
                comm, stream(stream)), "ncclAllReduce");
        averageDone(in, send, stream);
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
        long in = averaged(send, count, stride, size, type, op, stream);
        if (in != send) {
            stride = count; // the divided rows are contiguous
        }
        reduceScatterOf(in, recv, count, stride, type, ncclOp(op, type), stream);
        averageDone(in, send, stream);
    }

    private void reduceScatterOf(long send, long recv, long count, long stride, DataType type, ReduceOp op,
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
        long in = averaged(send, count, count, 1, type, op, stream);
        check(nccl.ncclReduce(sendPtr.set(in), recvPtr.set(recv), count, type.code(), ncclOp(op, type).code(), root,
                comm, stream(stream)), "ncclReduce");
        averageDone(in, send, stream);
    }

    // ---- AlltoAll, Gather, Scatter, grouped sends and receives ----

    @Override
    public void allToAll(long send, long recv, long count, long stride, DataType type, RuntimeStream stream) {
        if (stride == count) {
            check(nccl.ncclAlltoAll(sendPtr.set(send), recvPtr.set(recv), count, type.code(), comm, stream(stream)),
                    "ncclAlltoAll");
        } else {
            exchange(BlockTransfers.allToAll(blocks, size, send, recv, count, stride, type.size()), stream);
        }
    }

    @Override
    public void gather(long send, long recv, long count, long stride, DataType type, int root, RuntimeStream stream) {
        if (stride == count) {
            check(nccl.ncclGather(sendPtr.set(send), recvPtr.set(recv), count, type.code(), root, comm,
                    stream(stream)), "ncclGather");
        } else {
            exchange(BlockTransfers.gather(blocks, rank, size, root, send, recv, count, stride, type.size()), stream);
        }
    }

    @Override
    public void scatter(long send, long recv, long count, long stride, DataType type, int root, RuntimeStream stream) {
        if (stride == count) {
            check(nccl.ncclScatter(sendPtr.set(send), recvPtr.set(recv), count, type.code(), root, comm,
                    stream(stream)), "ncclScatter");
        } else {
            exchange(BlockTransfers.scatter(blocks, rank, size, root, send, recv, count, stride, type.size()), stream);
        }
    }

    /** The transfers as bytes, in one NCCL group (a transfer to this rank itself is NCCL's too). */
    @Override
    public void exchange(PeerOps ops, RuntimeStream stream) {
        CUstream_st s = stream(stream);
        group(true);
        try {
            for (int i = 0; i < ops.size(); i++) {
                long bytes = ops.bytes(i);
                if (bytes == 0) {
                    continue;
                }
                if (ops.isSend(i)) {
                    check(nccl.ncclSend(sendPtr.set(ops.address(i)), bytes, nccl.ncclUint8, ops.peer(i), comm, s),
                            "ncclSend(peer " + ops.peer(i) + ")");
                } else {
                    check(nccl.ncclRecv(recvPtr.set(ops.address(i)), bytes, nccl.ncclUint8, ops.peer(i), comm, s),
                            "ncclRecv(peer " + ops.peer(i) + ")");
                }
            }
        } finally {
            group(false);
        }
    }

    /**
     * ncclCommRegister, so that NCCL's own transports may use the buffer in place (NVLS, IPC peers, the network),
     * as for an NCCL program. The closeable deregisters it, and does nothing once this communicator was destroyed
     * or aborted: both free its every registration (NCCL's ncclRegCleanup). NCCL hands out NULL where local
     * registration is off (NCCL_LOCAL_REGISTER=0); NULL is deregistered as nothing, as NCCL does.
     */
    @Override
    public AutoCloseable register(long address, long bytes) {
        long handle;
        try (PointerPointer<Pointer> out = new PointerPointer<>(1)) {
            UNSAFE.putLong(out.address(), 0L); // NCCL leaves it unwritten for a buffer with host memory in it
            check(nccl.ncclCommRegister(comm, new RawPointer().set(address), bytes, out), "ncclCommRegister");
            handle = UNSAFE.getLong(out.address());
        }
        LOG.debug("INIT ncclCommRegister rank {}/{}: {} B at 0x{}, handle 0x{}", rank, size, bytes,
                Long.toHexString(address), Long.toHexString(handle));
        return () -> deregister(handle);
    }

    private void deregister(long handle) {
        if (handle == 0 || closed || aborted) {
            return;
        }
        check(nccl.ncclCommDeregister(comm, new RawPointer().set(handle)), "ncclCommDeregister");
        LOG.debug("INIT ncclCommDeregister rank {}/{}: handle 0x{}", rank, size, Long.toHexString(handle));
    }

    /** NCCL's windows and signals ({@link NcclOneSided}): this is the transport that has them. */
    @Override
    public io.flexlink.runtime.OneSided oneSided() {
        return oneSided;
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
        prescaled.close();
    }
}
