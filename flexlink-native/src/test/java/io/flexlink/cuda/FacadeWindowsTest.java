package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclWindow_vidmem;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Test;

/**
 * The window functions on host-backend communicators registered as facade handles (no CUDA needed): NCCL's codes
 * for every input the facade checks itself, and the host ring's refusal (ncclInvalidUsage, saying why: no NCCL
 * path) passed through; no window is made, so the out-parameters stay NULL. The calls that take a stream reach a
 * communicator only on CUDA (FacadeWindowsGpuTest); here they are refused before the stream is looked at.
 */
class FacadeWindowsTest extends FacadeBufferRanks {
    private static ncclWindow_vidmem window(long handle) {
        ncclWindow_vidmem w = new ncclWindow_vidmem();
        NcclFacade.setAddress(w, handle);
        return w;
    }

    private static void lastErrorSays(String... words) {
        String e = ncclGetLastError(null).getString();
        for (String w : words) {
            assertTrue(e.contains(w), "'" + w + "' in: " + e);
        }
    }

    @Test
    void theHostRingRefusesWindowsSayingWhy() {
        ncclWindow_vidmem win = window(0x1234);
        assertEquals(ncclInvalidUsage, ncclCommWindowRegister(h[0], at(mem[0].address()), 4096, win,
                NCCL_WIN_COLL_SYMMETRIC));
        lastErrorSays("ncclCommWindowRegister", "needs NCCL's path", "not NCCL");
        assertEquals(0, win.address(), "NULL after a refusal");
        try (PointerPointer<Pointer> slot = new PointerPointer<>(1)) {
            slot.put(0, at(0x1234));
            assertEquals(ncclInvalidUsage, ncclCommWindowRegister(h[1], at(mem[1].address()), 4096, slot,
                    NCCL_WIN_DEFAULT));
            assertEquals(null, slot.get(0), "NULL after a refusal");
        }
        assertEquals(List.of(), world[0].windows());
    }

    @Test
    void everyBadInputHasNcclsCode() {
        Pointer buff = at(mem[0].address());
        ncclWindow_vidmem win = new ncclWindow_vidmem();
        ncclComm unknown = new ncclComm();
        NcclFacade.setAddress(unknown, NcclFacade.HANDLE_TAG | 0x7FFF_FFE0L); // never handed out
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(null, buff, 64, win, 0));
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(unknown, buff, 64, win, 0));
        lastErrorSays("comm");
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], buff, 64, (ncclWindow_vidmem) null, 0));
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], buff, 64, (PointerPointer) null, 0));
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], buff, 64, new PointerPointer<>(), 0));
        lastErrorSays("win");
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], null, 64, win, 0));
        lastErrorSays("buff");
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], buff, 0, win, 0));
        lastErrorSays("bytes");
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], buff, 4097, win, 0), "past the allocation");
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], at(mem[1].address()), 64, win, 0));
        assertEquals(ncclInvalidArgument, ncclCommWindowRegister(h[0], buff, 64, win, -1));
        lastErrorSays("flags");

        ncclWindow_vidmem never = window(0x7000_0000_1000L);
        assertEquals(ncclSuccess, ncclCommWindowDeregister(h[0], null), "NULL is no window, as in NCCL");
        assertEquals(ncclSuccess, ncclCommWindowDeregister(h[0], new ncclWindow_vidmem()));
        assertEquals(ncclInvalidArgument, ncclCommWindowDeregister(h[0], never));
        lastErrorSays("win", "no window of this communicator");
        assertEquals(ncclInvalidArgument, ncclCommWindowDeregister(unknown, never));

        try (PointerPointer<Pointer> out = new PointerPointer<>(1)) {
            assertEquals(ncclInvalidArgument, ncclWinGetUserPtr(h[0], never, out));
            lastErrorSays("win");
            assertEquals(ncclInvalidArgument, ncclWinGetUserPtr(h[0], null, out));
            assertEquals(ncclInvalidArgument, ncclWinGetUserPtr(h[0], never, (Pointer) null));
            assertEquals(ncclInvalidArgument, ncclWinGetUserPtr(h[0], never, (PointerPointer) null));
            lastErrorSays("outUserPtr");
            assertEquals(ncclInvalidArgument, ncclWinGetUserPtr(null, never, out));
        }

        assertEquals(ncclInvalidArgument, ncclPutSignal(buff, 4, ncclFloat, 1, never, 0, 0, 0, 0, h[0], null));
        lastErrorSays("peerWin");
        assertEquals(ncclInvalidArgument, ncclPutSignal(buff, 4, ncclFloat, 1, null, 0, 0, 0, 0, h[0], null));
        assertEquals(ncclInvalidArgument, ncclPutSignal(buff, 4, 99, 1, never, 0, 0, 0, 0, h[0], null));
        lastErrorSays("datatype");
        assertEquals(ncclInvalidArgument, ncclPutSignal(buff, 4, ncclFloat, 1, never, 0, 0, 0, 0, unknown, null));
        assertEquals(ncclInvalidArgument, ncclSignal(1, 0, 1, 0, h[0], null));
        lastErrorSays("ctx");
        assertEquals(ncclInvalidArgument, ncclSignal(1, 0, 0, 2, h[0], null));
        lastErrorSays("flags");
        assertEquals(ncclInvalidArgument, ncclSignal(1, 0, 0, 0, null, null));
        assertEquals(ncclInvalidArgument, ncclWaitSignal(-1, null, h[0], null));
        lastErrorSays("nDesc");
        assertEquals(ncclInvalidArgument, ncclWaitSignal(1, null, h[0], null));
        lastErrorSays("signalDescs");
        assertEquals(ncclInvalidArgument, ncclWaitSignal(0, null, unknown, null));
        assertEquals(List.of(), world[0].windows(), "nothing made");
        NcclFacade.setAddress(unknown, 0);
    }
}
