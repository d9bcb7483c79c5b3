package io.flexlink.bench;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.FloatFormats;
import io.flexlink.verify.PreMulSumPattern;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * The baseline on CUDA: NCCL itself, through bytedeco's {@code org.bytedeco.cuda.global.nccl}, on the
 * workspace's buffers and the very {@code cudaStream_t}s FlexLink uses ({@link CudaStreams}); its own
 * NCCL communicators (ncclCommInitAll in one process, ncclCommInitRank with a unique id from rank 0 in a
 * --from-env job). Nothing of FlexLink's engine is on this path. Calls pass raw addresses through reused
 * Pointers (one pair per local rank, since -t threads enqueue at once), so a steady-state call creates
 * no Pointer.
 */
final class NcclCalls extends RankCalls {
    /** A Pointer whose address is set in place (position 0). */
    private static final class Address extends Pointer {
        Address set(long a) {
            address = a;
            return this;
        }
    }

    private final ncclComm[] comms;
    private final CudaStreams streams;
    private final String label;
    /** Per local rank: with -t several threads enqueue at once, each on its own ranks. */
    private final Address[] sendPtr;
    private final Address[] recvPtr;
    /** Per local rank: its mulsum scalar (one element of the call's type) and its global rank (-1: not read yet). */
    private final LongPointer[] scalars;
    private final int[] globalRank;
    private final int[] out = new int[1];
    private boolean aborted;

    private NcclCalls(ncclComm[] comms, CudaStreams streams) {
        this(comms, streams, "");
    }

    /** {@code how}: what the label adds after "called directly", e.g. how the communicators were split. */
    private NcclCalls(ncclComm[] comms, CudaStreams streams, String how) {
        super(comms.length);
        this.comms = comms;
        this.streams = streams;
        this.sendPtr = new Address[comms.length];
        this.recvPtr = new Address[comms.length];
        for (int r = 0; r < comms.length; r++) {
            sendPtr[r] = new Address();
            recvPtr[r] = new Address();
        }
        this.scalars = new LongPointer[comms.length];
        this.globalRank = new int[comms.length];
        java.util.Arrays.fill(globalRank, -1);
        int[] v = {0};
        check(nccl.ncclGetVersion(v), "ncclGetVersion");
        this.label = "NCCL " + v[0] / 10000 + "." + v[0] % 10000 / 100 + "." + v[0] % 100
                + " (bytedeco, called directly" + how + ")";
    }

    /** One communicator per local device, as ncclCommInitAll (the devices must differ: NCCL refuses otherwise). */
    static NcclCalls initAll(int[] devices, CudaStreams streams) {
        int n = devices.length;
        PointerPointer<ncclComm> handles = new PointerPointer<>(n);
        int previous = CudaStreams.CudaDevice.enter(devices[0]);
        try {
            check(nccl.ncclCommInitAll(handles, n, devices.clone()), "ncclCommInitAll(" + n + " devices)");
        } finally {
            CudaStreams.CudaDevice.exit(previous);
        }
        ncclComm[] comms = new ncclComm[n];
        for (int r = 0; r < n; r++) {
            comms[r] = new ncclComm(handles.get(r));
        }
        handles.close();
        return new NcclCalls(comms, streams);
    }

    /** This process's one rank of a --from-env job: rank 0's unique id travels through {@code gather}. */
    static NcclCalls initRank(RankGather gather, int rank, int size, int device, CudaStreams streams) {
        byte[] mine = new byte[0];
        if (rank == 0) {
            ncclUniqueId id = new ncclUniqueId();
            check(nccl.ncclGetUniqueId(id), "ncclGetUniqueId");
            mine = new byte[nccl.NCCL_UNIQUE_ID_BYTES];
            id.internal().get(mine);
            id.close();
        }
        byte[] idBytes = gather.gatherBytes(mine)[0];
        if (idBytes.length != nccl.NCCL_UNIQUE_ID_BYTES) {
            throw new FlexLinkException(Result.INTERNAL_ERROR, "NCCL unique id from rank 0 has " + idBytes.length
                    + " bytes");
        }
        ncclUniqueId id = new ncclUniqueId();
        id.internal().put(idBytes);
        ncclComm comm = new ncclComm();
        int previous = CudaStreams.CudaDevice.enter(device);
        try {
            check(nccl.ncclCommInitRank(comm, size, id, rank), "ncclCommInitRank(rank " + rank + "/" + size + ")");
        } finally {
            CudaStreams.CudaDevice.exit(previous);
            id.close();
        }
        return new NcclCalls(new ncclComm[] {comm}, streams);
    }

    /**
     * These communicators split by ncclCommSplit with {@code colors[r]} and {@code keys[r]} for local rank
     * r ({@link RawNcclPlan}), then destroyed, whether the split worked or not (a child does not depend on
     * its parent). The splits are in one group: NCCL requires it of one thread's several ranks, each of
     * which would otherwise wait alone for the others. NCCL writes the new handles when the group ends, so
     * each goes into native memory of its own that outlives the call, not into a handle bytedeco copies
     * back on return. {@code setting} names the split in the label.
     */
    NcclCalls split(int[] colors, int[] keys, String setting) {
        int n = comms.length;
        @SuppressWarnings("unchecked")
        PointerPointer<ncclComm>[] slots = new PointerPointer[n];
        ncclComm[] children = new ncclComm[n];
        boolean ok = false;
        try {
            for (int r = 0; r < n; r++) {
                slots[r] = new PointerPointer<>(1);
                slots[r].put(0, null);
            }
            groupStart();
            try {
                for (int r = 0; r < n; r++) {
                    check(nccl.ncclCommSplit(comms[r], colors[r], keys[r], slots[r], null), "ncclCommSplit(color "
                            + colors[r] + ", key " + keys[r] + ")");
                }
            } finally {
                groupEnd();
            }
            for (int r = 0; r < n; r++) {
                Pointer h = slots[r].get(0);
                if (h == null || h.isNull()) {
                    throw new FlexLinkException(Result.INTERNAL_ERROR, "ncclCommSplit(color " + colors[r]
                            + ") gave local rank " + r + " no communicator");
                }
                children[r] = new ncclComm(h);
            }
            ok = true;
            return new NcclCalls(children, streams, "; ncclCommSplit by " + setting);
        } finally {
            for (PointerPointer<ncclComm> p : slots) {
                if (p == null) {
                    continue;
                }
                Pointer h = p.get(0);
                if (!ok && h != null && !h.isNull()) {
                    nccl.ncclCommAbort(new ncclComm(h)); // a child NCCL made before the split failed elsewhere
                }
                p.close();
            }
            close();
        }
    }

    @Override
    public String label() {
        return label;
    }

    /** ncclCommRegister, as nccl-tests' -R 1; the deregistration is skipped once ncclCommAbort or ncclCommDestroy ran. */
    @Override
    public AutoCloseable registerBuffer(int r, long address, long bytes) {
        ncclComm comm = comms[r];
        Pointer handle = new Pointer(); // NCCL writes the handle into it (bytedeco's void** as a Pointer)
        check(nccl.ncclCommRegister(comm, new Address().set(address), bytes, handle), "ncclCommRegister");
        return () -> {
            if (!aborted) {
                check(nccl.ncclCommDeregister(comm, handle), "ncclCommDeregister");
            }
        };
    }

    @Override
    public void groupStart() {
        check(nccl.ncclGroupStart(), "ncclGroupStart");
    }

    @Override
    public void groupEnd() {
        check(nccl.ncclGroupEnd(), "ncclGroupEnd");
    }

    @Override
    void collective(int r, CallSpec c, long send, long recv, RuntimeStream stream) {
        long n = c.shape.count;
        int type = code(c.type);
        ncclComm comm = comms[r];
        CUstream_st s = streams.handle(r);
        Pointer sp = sendPtr[r].set(send);
        Pointer rp = recvPtr[r].set(recv);
        boolean preMulSum = c.op.builtIn == null && c.collective.collective().reduces();
        int op = preMulSum ? createPreMulSum(r, c.type) : c.op.dataOp().code();
        try {
            collective(c, sp, rp, n, type, op, comm, s);
        } finally {
            if (preMulSum) {
                check(nccl.ncclRedOpDestroy(op, comm), "ncclRedOpDestroy");
            }
        }
    }

    /**
     * nccl-tests' mulsum: an operation made just before the call and destroyed right after it, with the host
     * scalar of the rank ({@link PreMulSumPattern#scalar}: 1 on even ranks, 2 on odd ranks).
     */
    private int createPreMulSum(int r, DataType t) {
        if (globalRank[r] < 0) {
            check(nccl.ncclCommUserRank(comms[r], out), "ncclCommUserRank");
            globalRank[r] = out[0];
            scalars[r] = new LongPointer(1);
        }
        scalars[r].put(0, FloatFormats.fromDouble(t, PreMulSumPattern.scalar(globalRank[r]))); // its low bytes first
        check(nccl.ncclRedOpCreatePreMulSum(out, scalars[r], code(t), nccl.ncclScalarHostImmediate, comms[r]),
                "ncclRedOpCreatePreMulSum");
        return out[0];
    }

    private static void collective(CallSpec c, Pointer sp, Pointer rp, long n, int type, int op, ncclComm comm,
                                   CUstream_st s) {
        switch (c.collective.collective()) {
            case ALL_REDUCE:
                check(nccl.ncclAllReduce(sp, rp, n, type, op, comm, s), "ncclAllReduce");
                break;
            case ALL_GATHER:
                check(nccl.ncclAllGather(sp, rp, n, type, comm, s), "ncclAllGather");
                break;
            case REDUCE_SCATTER:
                check(nccl.ncclReduceScatter(sp, rp, n, type, op, comm, s), "ncclReduceScatter");
                break;
            case BROADCAST:
                check(nccl.ncclBroadcast(sp, rp, n, type, c.root, comm, s), "ncclBroadcast");
                break;
            case REDUCE:
                check(nccl.ncclReduce(sp, rp, n, type, op, c.root, comm, s), "ncclReduce");
                break;
            case ALL_TO_ALL:
                check(nccl.ncclAlltoAll(sp, rp, n, type, comm, s), "ncclAlltoAll");
                break;
            case GATHER:
                check(nccl.ncclGather(sp, rp, n, type, c.root, comm, s), "ncclGather");
                break;
            case SCATTER:
                check(nccl.ncclScatter(sp, rp, n, type, c.root, comm, s), "ncclScatter");
                break;
            default:
                throw new IllegalStateException(c.collective + " is no collective call");
        }
    }

    /** ncclSend/ncclRecv in a group of their own (nested in the caller's, if any). */
    @Override
    void exchange(int r, PeerOps ops, DataType t, RuntimeStream stream) {
        int type = code(t);
        int sz = t.size();
        ncclComm comm = comms[r];
        CUstream_st s = streams.handle(r);
        groupStart();
        try {
            for (int i = 0; i < ops.size(); i++) {
                // NCCL takes the address when called: one reused Pointer per direction is enough
                if (ops.isSend(i)) {
                    check(nccl.ncclSend(sendPtr[r].set(ops.address(i)), ops.bytes(i) / sz, type, ops.peer(i), comm, s),
                            "ncclSend");
                } else {
                    check(nccl.ncclRecv(recvPtr[r].set(ops.address(i)), ops.bytes(i) / sz, type, ops.peer(i), comm, s),
                            "ncclRecv");
                }
            }
        } finally {
            groupEnd();
        }
    }

    /** FlexLink's type codes are NCCL's ({@code ncclDataType_t}). */
    private static int code(DataType t) {
        return t.code();
    }

    @Override
    public void abort() {
        if (aborted) {
            return;
        }
        aborted = true;
        for (ncclComm c : comms) {
            nccl.ncclCommAbort(c);
        }
    }

    @Override
    public void close() {
        if (aborted) {
            return; // ncclCommAbort already freed them
        }
        aborted = true;
        for (ncclComm c : comms) {
            nccl.ncclCommDestroy(c);
        }
        for (LongPointer p : scalars) {
            if (p != null) {
                p.close();
            }
        }
    }

    static void check(int rc, String what) {
        if (rc != nccl.ncclSuccess) {
            throw new FlexLinkException(Result.fromCode(rc), what + ": " + nccl.ncclGetErrorString(rc).getString());
        }
    }
}
