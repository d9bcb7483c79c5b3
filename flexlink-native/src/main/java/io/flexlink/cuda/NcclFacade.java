package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.javacpp.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state behind {@link FlexNccl}: the handle table of facade communicators, the CUDA backend they
 * run on, and the per-thread group bookkeeping for NCCL's point-to-point calls.
 */
final class NcclFacade {
    static final Logger LOG = LoggerFactory.getLogger(FlexNccl.class);

    /**
     * Handles are this tag plus a counter: a non-canonical x86-64 address (bits 48-63 set, bit 47
     * clear), so a handle passed by mistake to the real NCCL faults at once instead of corrupting memory.
     */
    static final long HANDLE_TAG = 0x0F1E_0000_0000_0000L;
    private static final AtomicLong NEXT = new AtomicLong(1);
    private static final LongObjectMap<FacadeComm> COMMS = new LongObjectMap<>();
    private static final long POINTER_ADDRESS = addressOffset();
    /** Per thread: [0] facade group depth, [1] 1 while this thread holds an NCCL group for ncclSend/ncclRecv. */
    private static final ThreadLocal<int[]> GROUP = ThreadLocal.withInitial(() -> new int[2]);
    private static volatile CudaBackend ownBackend;

    /** One facade communicator. */
    static final class FacadeComm {
        final long handle;
        final Communicator comm;
        final NcclComm nccl;
        final CudaBackend backend;
        final int device;

        FacadeComm(long handle, Communicator comm, NcclComm nccl, CudaBackend backend) {
            this.handle = handle;
            this.comm = comm;
            this.nccl = nccl;
            this.backend = backend;
            this.device = comm.device();
        }

        /** The user's stream (null: the legacy default stream), wrapped once per address. */
        CudaStream stream(CUstream_st s) {
            return backend.wrapStream(s == null ? 0 : s.address(), device);
        }
    }

    private NcclFacade() {
    }

    private static long addressOffset() {
        try {
            return UNSAFE.objectFieldOffset(Pointer.class.getDeclaredField("address"));
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Sets a bytedeco Pointer's address in place, as bytedeco's {@code @ByPtrPtr} output parameters do. */
    static void setAddress(Pointer p, long address) {
        UNSAFE.putLong(p, POINTER_ADDRESS, address);
    }

    /** What bytedeco's JNI passes for a {@code void*} parameter: address plus position, in bytes. */
    static long address(Pointer p) {
        return p == null ? 0 : p.address() + p.position();
    }

    static FacadeComm lookup(Pointer comm) {
        return comm == null ? null : COMMS.get(comm.address());
    }

    static FacadeComm remove(Pointer comm) {
        return comm == null || comm.address() == 0 ? null : COMMS.remove(comm.address());
    }

    /** The CUDA backend: FlexLink's default one when it is CUDA, else one of our own. */
    static CudaBackend backend() {
        String reason = CudaBackendProvider.reason();
        if (reason != null) {
            throw new FlexLinkException(Result.SYSTEM_ERROR, "FlexNccl needs CUDA: " + reason);
        }
        CudaBackend own = ownBackend;
        if (own != null) {
            return own;
        }
        Backend b = FlexLink.backend();
        if (b instanceof CudaBackend) {
            return (CudaBackend) b;
        }
        synchronized (NcclFacade.class) {
            if (ownBackend == null) {
                LOG.info("INIT FlexNccl: the default backend is {}; opening a cuda backend for the facade", b.name());
                ownBackend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
            }
            return ownBackend;
        }
    }

    /** Creates the communicators of {@code ncclCommInitAll} and registers them; returns their handles. */
    static long[] initAll(int[] devices) {
        CudaBackend backend = backend();
        NcclTransport.beginCapture();
        Communicator[] comms;
        List<NcclComm> nccls;
        try {
            comms = FlexLink.initAll(backend, FlexLinkConfig.fromEnvironment(), devices);
        } finally {
            nccls = NcclTransport.endCapture();
        }
        long[] handles = new long[comms.length];
        for (int r = 0; r < comms.length; r++) {
            handles[r] = register(comms[r], nccls.size() == comms.length ? nccls.get(r) : null, backend);
        }
        return handles;
    }

    /** Creates this thread's rank of {@code ncclCommInitRank} on the current device; returns its handle. */
    static long initRank(int nranks, byte[] id, int rank) {
        CudaBackend backend = backend();
        int device = Devices.refresh();
        NcclTransport.beginCapture();
        Communicator comm;
        List<NcclComm> nccls;
        try {
            comm = FlexLink.initRank(backend, FlexLinkConfig.fromEnvironment(), nranks, UniqueId.fromBytes(id), rank,
                    device);
        } finally {
            nccls = NcclTransport.endCapture();
        }
        return register(comm, nccls.size() == 1 ? nccls.get(0) : null, backend);
    }

    /** Registers {@code comm} under a fresh handle (package-private: tests register host-backend ones). */
    static long register(Communicator comm, NcclComm nccl, CudaBackend backend) {
        long handle = HANDLE_TAG | NEXT.getAndIncrement();
        COMMS.put(handle, new FacadeComm(handle, comm, nccl, backend));
        LOG.debug("INIT FlexNccl comm 0x{}: {}", Long.toHexString(handle), comm);
        return handle;
    }

    // ---- groups: FlexLink's (whose end also ends NCCL's group of the primary paths) ----

    static void groupStart() {
        GROUP.get()[0]++;
        FlexLink.groupStart();
    }

    /**
     * Ends the group; the depth drops before the end can fail, as NCCL's does. The outermost end also runs
     * the group's ncclCommSplit calls ({@link FacadeSplit}), even when the group's collectives failed.
     */
    static void groupEnd() {
        int[] g = GROUP.get();
        if (g[0] > 0) {
            g[0]--;
        }
        FlexLinkException failed = null;
        try {
            FlexLink.groupEnd();
        } catch (FlexLinkException e) {
            failed = e;
        }
        if (g[0] == 0) {
            try {
                FacadeSplit.runDeferred();
            } catch (FlexLinkException e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** This thread's facade group depth (tests). */
    static int groupDepth() {
        return GROUP.get()[0];
    }

    /** The result code for a failed call (logged at debug: the caller gets the code). */
    static int failed(String call, FlexLinkException e) {
        if (LOG.isDebugEnabled()) {
            LOG.debug("COLL {} failed: {}", call, e.getMessage());
        }
        return e.result().code();
    }

    /** ncclInternalError for anything unexpected, logged with its stack. */
    static int internal(String call, Throwable t) {
        LOG.error("COLL {} failed unexpectedly", call, t);
        return Result.INTERNAL_ERROR.code();
    }
}
