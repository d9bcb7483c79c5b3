package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
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
    /**
     * What the process's last failed facade call said ({@code ncclGetLastError}): one text for every thread, as
     * NCCL keeps its last error in one global string, so that a thread may read what another one's call said.
     */
    private static volatile String lastError = "";

    /** One facade communicator. */
    static final class FacadeComm {
        final long handle;
        final Communicator comm;
        final NcclComm nccl;
        final CudaBackend backend;
        final int device;
        /** ncclConfig_t's commName, or null. */
        final String name;
        /** How log lines name it: its handle and commName (made once, not per failed call). */
        final String label;
        /** Its PreMulSum operations by ncclRedOp_t code. */
        final FacadeOps ops = new FacadeOps();
        /** Its buffer registrations by the handle ncclCommRegister gave out ({@link FacadeRegistration}). */
        final LongObjectMap<io.flexlink.Registration> registrations = new LongObjectMap<>();
        /** Its windows by the handle ncclCommWindowRegister gave out ({@link FacadeWindows}). */
        final LongObjectMap<io.flexlink.Window> windows = new LongObjectMap<>();
        /** ncclConfig_t's blocking: false runs its finalize, revoke and shrink in the background (ncclInProgress). */
        final boolean blocking;
        /**
         * {@link FacadeEnds}: -1 until ncclCommFinalize or ncclCommRevoke is called (each once, never both, as
         * NCCL's); then ncclInProgress until it returned, then its result.
         */
        final AtomicInteger end = new AtomicInteger(-1);
        /** The thread of a background finalize or revoke, which ncclCommDestroy waits for; or null. */
        volatile Thread ender;

        FacadeComm(long handle, Communicator comm, NcclComm nccl, CudaBackend backend) {
            this(handle, comm, nccl, backend, null, true);
        }

        FacadeComm(long handle, Communicator comm, NcclComm nccl, CudaBackend backend, String name, boolean blocking) {
            this.handle = handle;
            this.comm = comm;
            this.nccl = nccl;
            this.backend = backend;
            this.device = comm.device();
            this.name = name;
            this.label = label(handle, name);
            this.blocking = blocking;
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

    /** Registers {@code comm} under a fresh handle (package-private: tests register host-backend ones). */
    static long register(Communicator comm, NcclComm nccl, CudaBackend backend) {
        long handle = newHandle();
        put(new FacadeComm(handle, comm, nccl, backend));
        return handle;
    }

    /** A handle never handed out before (one made by a creation that finishes later, say). */
    static long newHandle() {
        return HANDLE_TAG | NEXT.getAndIncrement();
    }

    /** Puts a communicator made for a handle of {@link #newHandle()} into the table. */
    static void put(FacadeComm c) {
        COMMS.put(c.handle, c);
        LOG.debug("INIT FlexNccl {}: {}", c.label, c.comm);
    }

    /** {@code comm 0x…} or {@code comm 0x… 'name'}. */
    static String label(long handle, String name) {
        return "comm 0x" + Long.toHexString(handle) + (name == null ? "" : " '" + name + "'");
    }

    // ---- groups: FlexLink's (whose end also ends NCCL's group of the primary paths) ----

    /** {@code ncclGroupStart}. */
    static int groupStart() {
        try {
            GROUP.get()[0]++;
            FlexLink.groupStart();
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return failed("ncclGroupStart", e);
        } catch (RuntimeException | LinkageError e) {
            return internal("ncclGroupStart", e);
        }
    }

    /** {@code ncclGroupEnd}: {@link #groupEnd}, with anything unexpected as ncclInternalError. */
    static int groupEndCode() {
        try {
            return groupEnd();
        } catch (RuntimeException | LinkageError e) {
            return internal("ncclGroupEnd", e);
        }
    }

    /**
     * Ends the group; the depth drops before the end can fail, as NCCL's does. The outermost end also
     * creates the communicators {@code ncclCommInitRank} deferred in it ({@link FacadeCreation#endGroup}),
     * then runs the group's ncclCommSplit calls ({@link FacadeSplit}), even when the group's collectives
     * failed; the first failure is the result.
     */
    static int groupEnd() {
        return groupEnd(null);
    }

    /**
     * {@link #groupEnd()}, or with {@code simulated} ({@code ncclGroupSimulateEnd}) FlexLink's simulated end:
     * nothing launched, the estimated seconds into {@code simulated[0]} (NaN for an inner end).
     */
    static int groupEnd(double[] simulated) {
        int[] g = GROUP.get();
        if (g[0] > 0) {
            g[0]--;
        }
        int rc = Result.SUCCESS.code();
        try {
            if (simulated == null) {
                FlexLink.groupEnd();
            } else {
                simulated[0] = FlexLink.groupSimulateEnd();
            }
        } catch (FlexLinkException e) {
            rc = failed("ncclGroupEnd", e);
        } catch (RuntimeException | LinkageError e) {
            rc = internal("ncclGroupEnd", e);
        }
        if (g[0] == 0) {
            int made = FacadeCreation.endGroup();
            rc = rc != Result.SUCCESS.code() ? rc : made;
            int split = Result.SUCCESS.code();
            try {
                FacadeSplit.runDeferred();
            } catch (FlexLinkException e) {
                split = failed("ncclCommSplit", e);
            } catch (RuntimeException | LinkageError e) {
                split = internal("ncclCommSplit", e);
            }
            rc = rc != Result.SUCCESS.code() ? rc : split;
            int finalized = FacadeEnds.runDeferred(); // after the group's collectives launched: it waits for them
            rc = rc != Result.SUCCESS.code() ? rc : finalized;
        }
        return rc;
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
        lastError = call + ": " + e.getMessage();
        return e.result().code();
    }

    /** ncclInternalError for anything unexpected, logged with its stack. */
    static int internal(String call, Throwable t) {
        LOG.error("COLL {} failed unexpectedly", call, t);
        lastError = call + ": unexpected " + t;
        return Result.INTERNAL_ERROR.code();
    }

    /** The message of the process's last failed facade call ({@code ncclGetLastError}), or "". */
    static String lastError() {
        return lastError;
    }
}
