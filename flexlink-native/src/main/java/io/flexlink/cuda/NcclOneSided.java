package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.runtime.OneSided;
import io.flexlink.runtime.RuntimeStream;
import java.util.function.BooleanSupplier;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclWaitSignalDesc_t;
import org.bytedeco.cuda.nccl.ncclWindow_vidmem;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rank's NCCL windows and one-sided calls ({@link NcclComm#oneSided()}), NCCL's own. Each call first checks
 * that the loaded library has it ({@link NcclVersions}): windows since NCCL 2.27, ncclWinGetUserPtr and the signals
 * since 2.29; an older library is INVALID_USAGE naming the version.
 */
final class NcclOneSided implements OneSided {
    private static final Logger LOG = LoggerFactory.getLogger(NcclOneSided.class);
    private static final int WINDOWS = NcclVersions.WINDOWS;
    private static final int SIGNALS = NcclVersions.SIGNALS;

    private final ncclComm comm;
    private final int rank;
    private final int size;
    private final int device;
    /** True once the communicator was destroyed or aborted: NCCL freed its windows with it. */
    private final BooleanSupplier gone;
    private final RawPointer buffer = new RawPointer();
    private final ncclWindow_vidmem window = new ncclWindow_vidmem();

    NcclOneSided(ncclComm comm, int rank, int size, int device, BooleanSupplier gone) {
        this.comm = comm;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.gone = gone;
    }

    private static int loadedVersion() {
        return NcclVersions.loaded();
    }

    private static void need(int version, String function) {
        NcclVersions.need(version, function);
    }

    private void check(int rc, String what) {
        if (rc != nccl.ncclSuccess) {
            throw NcclErrors.error(rc, what + " (rank " + rank + "/" + size + ")", comm);
        }
    }

    private ncclWindow_vidmem window(long handle) {
        NcclFacade.setAddress(window, handle);
        return window;
    }

    private static CUstream_st stream(RuntimeStream s) {
        return ((CudaStream) s).handle();
    }

    @Override
    public long registerWindow(long address, long bytes, int flags) {
        need(WINDOWS, "ncclCommWindowRegister");
        long handle;
        int previous = Devices.enter(device);
        try (PointerPointer<Pointer> out = new PointerPointer<>(1)) {
            UNSAFE.putLong(out.address(), 0L);
            check(nccl.ncclCommWindowRegister(comm, buffer.set(address), bytes, out, flags), "ncclCommWindowRegister");
            handle = UNSAFE.getLong(out.address());
        } finally {
            Devices.exit(previous);
        }
        // NULL where NCCL has no symmetric memory here (it answers success); a put into it is NCCL's to refuse
        LOG.debug("INIT ncclCommWindowRegister rank {}/{}: {} B at 0x{} flags {}, window 0x{}", rank, size, bytes,
                Long.toHexString(address), flags, Long.toHexString(handle));
        return handle;
    }

    /** NULL was no window: nothing to deregister (NCCL answers success for it too). */
    @Override
    public void deregisterWindow(long handle) {
        if (handle == 0 || gone.getAsBoolean()) {
            return;
        }
        int previous = Devices.enter(device);
        try {
            check(nccl.ncclCommWindowDeregister(comm, window(handle)), "ncclCommWindowDeregister");
        } finally {
            Devices.exit(previous);
        }
    }

    /** The registered address where NCCL cannot say: before 2.29 (no ncclWinGetUserPtr), or for a NULL window. */
    @Override
    public long userAddress(long handle, long address) {
        if (handle == 0 || loadedVersion() < SIGNALS) {
            return address;
        }
        try (PointerPointer<Pointer> out = new PointerPointer<>(1)) {
            UNSAFE.putLong(out.address(), 0L);
            check(nccl.ncclWinGetUserPtr(comm, window(handle), out), "ncclWinGetUserPtr");
            return UNSAFE.getLong(out.address());
        }
    }

    @Override
    public void putSignal(long src, long count, DataType type, int peer, long handle, long offset, int signal,
                          RuntimeStream stream) {
        need(SIGNALS, "ncclPutSignal");
        check(nccl.ncclPutSignal(buffer.set(src), count, type.code(), peer, window(handle), offset, signal, 0, 0,
                comm, stream(stream)), handle == 0 ? "ncclPutSignal (into a NULL window: NCCL registered none, "
                + "it has no symmetric memory here)" : "ncclPutSignal");
    }

    @Override
    public void signal(int peer, int signal, RuntimeStream stream) {
        need(SIGNALS, "ncclSignal");
        check(nccl.ncclSignal(peer, signal, 0, 0, comm, stream(stream)), "ncclSignal");
    }

    /** No waits is nothing to wait for; NCCL is not asked. */
    @Override
    public void waitSignal(int[] peers, int[] signals, int[] counts, RuntimeStream stream) {
        need(SIGNALS, "ncclWaitSignal");
        int n = peers.length;
        if (n == 0) {
            return;
        }
        try (ncclWaitSignalDesc_t descs = new ncclWaitSignalDesc_t(n)) {
            for (int i = 0; i < n; i++) {
                descs.getPointer(i).opCnt(counts[i]).peer(peers[i]).sigIdx(signals[i]).ctx(0);
            }
            check(nccl.ncclWaitSignal(n, descs, comm, stream(stream)), "ncclWaitSignal");
        }
    }
}
