package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static io.flexlink.cuda.facade.NcclProgram.*;
import static org.bytedeco.cuda.global.cudart.cudaErrorNotReady;
import static org.bytedeco.cuda.global.cudart.cudaSetDevice;
import static org.bytedeco.cuda.global.cudart.cudaStreamCreate;
import static org.bytedeco.cuda.global.cudart.cudaStreamDestroy;
import static org.bytedeco.cuda.global.cudart.cudaStreamQuery;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.flexlink.Window;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclWaitSignalDesc_t;
import org.bytedeco.cuda.nccl.ncclWindow_vidmem;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue #17's window functions on a GPU, one rank (ncclCommInitAll on device 0), NCCL's allocator: two windows
 * (NCCL's put wants its source in one too), the user pointer, a put of N floats to the rank itself at an offset into
 * the poisoned window, a wait for its signal, every element of the window checked; then a signal and its wait.
 * Where NCCL itself refuses the window, the test checks the facade handed back NCCL's own code (NCCL asked
 * directly, the same way) and fails saying NCCL refused. The signals need NCCL 2.29: an older library (the lent
 * H200's 2.28.3) must refuse them with ncclInvalidUsage naming the version, and the test ends as skipped saying so.
 */
@Tag("gpu")
class FacadeWindowsGpuTest {
    private static final int N = (1 << 16) + 3;
    /** Bytes into the window where the put lands: NCCL_WIN_REQUIRED_ALIGNMENT, so any alignment rule holds. */
    private static final long OFFSET = 4096;
    private static final long WINDOW_BYTES = 1 << 20;

    @Test
    @SuppressWarnings("rawtypes")
    void registerPutSignalWaitSignalDeregister() throws Exception {
        GpuTests.assumeCuda();
        int[] version = new int[1];
        nccl(ncclGetVersion(version), "ncclGetVersion");
        cuda(cudaSetDevice(0), "cudaSetDevice");
        PointerPointer comms = new PointerPointer(1);
        nccl(ncclCommInitAll(comms, 1, new int[] {0}), "ncclCommInitAll");
        ncclComm comm = new ncclComm(comms.get(0));
        CUstream_st stream = new CUstream_st();
        cuda(cudaStreamCreate(stream), "cudaStreamCreate");
        Pointer buf = new Pointer();
        Pointer src = new Pointer();
        nccl(ncclMemAlloc(buf, WINDOW_BYTES), "ncclMemAlloc (window)");
        nccl(ncclMemAlloc(src, WINDOW_BYTES), "ncclMemAlloc (source)");
        int elements = (int) (WINDOW_BYTES / 4);
        float[] data = randomInts(N, 0x5EED0117L);
        upload(buf, poison(elements));
        upload(src, data);
        try {
            ncclWindow_vidmem win = new ncclWindow_vidmem();
            int rc = ncclCommWindowRegister(comm, buf, WINDOW_BYTES, win, NCCL_WIN_COLL_SYMMETRIC);
            if (rc != ncclSuccess) {
                ncclRefused(comm, buf, rc, version[0]);
            }
            assertNotEquals(0, win.address());
            List<Window> held = NcclFacade.lookup(comm).comm.windows();
            assertEquals(1, held.size());
            assertEquals(buf.address(), held.get(0).address());
            PointerPointer srcWin = new PointerPointer(1);
            nccl(ncclCommWindowRegister(comm, src, WINDOW_BYTES, srcWin, NCCL_WIN_COLL_SYMMETRIC),
                    "ncclCommWindowRegister (PointerPointer)");
            ncclWindow_vidmem sw = new ncclWindow_vidmem(srcWin.get(0));

            PointerPointer user = new PointerPointer(1);
            nccl(ncclWinGetUserPtr(comm, win, user), "ncclWinGetUserPtr (PointerPointer)");
            assertEquals(buf.address(), user.get(0).address(), "the window's user pointer is the buffer");
            Pointer userToo = new Pointer();
            nccl(ncclWinGetUserPtr(comm, sw, userToo), "ncclWinGetUserPtr (Pointer)");
            assertEquals(src.address(), userToo.address());

            rc = ncclPutSignal(src, N, ncclFloat, 0, win, OFFSET, 0, 0, 0, comm, stream);
            if (version[0] < 22900) {
                assertEquals(ncclInvalidUsage, rc, "the loaded NCCL has no ncclPutSignal: refused, not called");
                String e = ncclGetLastError(null).getString();
                assertTrue(e.contains("needs NCCL 2.29.0 or later"), e);
                assertEquals(ncclInvalidUsage, ncclSignal(0, 0, 0, 0, comm, stream));
                nccl(ncclCommWindowDeregister(comm, sw), "ncclCommWindowDeregister");
                nccl(ncclCommWindowDeregister(comm, win), "ncclCommWindowDeregister");
                Assumptions.abort("NCCL " + NcclTransport.version(version[0]) + " is loaded: windows registered, "
                        + "user pointers and deregistration checked; ncclPutSignal, ncclSignal and ncclWaitSignal "
                        + "need NCCL 2.29 and were refused (" + e + ")");
            }
            nccl(rc, "ncclPutSignal");
            ncclWaitSignalDesc_t desc = new ncclWaitSignalDesc_t(1);
            desc.opCnt(1).peer(0).sigIdx(0).ctx(0);
            nccl(ncclWaitSignal(1, desc, comm, stream), "ncclWaitSignal (the put's signal)");
            finish(comm, stream, "the put and its wait");
            float[] want = poison(elements);
            System.arraycopy(data, 0, want, (int) (OFFSET / 4), N);
            float[] got = hostFloats(buf, elements);
            expect(want, got, "the window after the put (poison around the " + N + " floats at " + OFFSET + " B)");

            // a signal without data; NCCL counts a wait's opCnt from the waits before (nccl-tests waits for 1 a round)
            nccl(ncclSignal(0, 0, 0, 0, comm, stream), "ncclSignal");
            nccl(ncclWaitSignal(1, desc, comm, stream), "ncclWaitSignal (the signal)");
            finish(comm, stream, "the signal and its wait");
            expect(want, hostFloats(buf, elements), "the window after the signal (unchanged)");

            nccl(ncclCommWindowDeregister(comm, sw), "ncclCommWindowDeregister (source)");
            nccl(ncclCommWindowDeregister(comm, win), "ncclCommWindowDeregister");
            assertEquals(ncclInvalidArgument, ncclCommWindowDeregister(comm, win), "a second deregistration");
            assertEquals(List.of(), NcclFacade.lookup(comm).comm.windows());
            desc.close();
        } finally {
            ncclMemFree(buf);
            ncclMemFree(src);
            cudaStreamDestroy(stream);
            ncclCommDestroy(comm);
            comms.close();
        }
    }

    /**
     * NCCL refused the window: the facade's code must be NCCL's own, asked directly the same way (where the library
     * has the function; before 2.27 the facade refuses it with ncclInvalidUsage naming the version). Then fails,
     * saying so: this is NCCL's answer on this machine, not a pass.
     */
    private static void ncclRefused(ncclComm comm, Pointer buf, int rc, int version) {
        String facade = ncclGetLastError(null).getString();
        if (version < 22700) {
            assertEquals(ncclInvalidUsage, rc, facade);
            fail("NCCL " + NcclTransport.version(version) + " has no windows (ncclCommWindowRegister is 2.27's): "
                    + facade);
        }
        ncclComm raw = NcclFacade.lookup(comm).nccl.handle();
        ncclWindow_vidmem w = new ncclWindow_vidmem();
        int direct = nccl.ncclCommWindowRegister(raw, buf, WINDOW_BYTES, w, nccl.NCCL_WIN_COLL_SYMMETRIC);
        if (direct == ncclSuccess) {
            nccl.ncclCommWindowDeregister(raw, w);
        }
        assertEquals(direct, rc, "the facade hands back NCCL's code (" + facade + ")");
        fail("NCCL " + NcclTransport.version(version) + " itself refused ncclCommWindowRegister on a one-rank "
                + "communicator with " + ncclGetErrorString(rc).getString() + " (" + rc + "); the facade passed "
                + "the code through: " + facade);
    }

    /** Waits for the stream's work, at most a minute (a wait for a signal that never comes would hang). */
    private static void finish(ncclComm comm, CUstream_st stream, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int rc;
        while ((rc = cudaStreamQuery(stream)) == cudaErrorNotReady) {
            if (System.nanoTime() > deadline) {
                ncclCommAbort(comm);
                fail(what + ": the stream did not finish in 60 s (the signal never reached its count?)");
            }
            Thread.sleep(1);
        }
        cuda(rc, what);
        assertEquals(ncclSuccess, asyncError(comm), what + ": the communicator's asynchronous error");
    }

    private static int asyncError(ncclComm comm) {
        int[] e = new int[1];
        nccl(ncclCommGetAsyncError(comm, e), "ncclCommGetAsyncError");
        return e[0];
    }
}
