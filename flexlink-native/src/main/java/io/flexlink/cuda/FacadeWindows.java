package io.flexlink.cuda;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.SignalWait;
import io.flexlink.Window;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * {@link FlexNccl}'s windows and signals over {@link io.flexlink.Communicator#registerWindow} and its one-sided
 * calls, which hand them to NCCL where it is the communicator's primary path (and refuse with ncclInvalidUsage,
 * saying why, where it is not). The user's {@code ncclWindow_t} is a FlexLink handle (tagged like a registration's,
 * bit 45 instead of 44) kept in its communicator's table, never NCCL's window: a window of another communicator, or
 * one deregistered already, is found in no table. The signal context and the flags are NCCL's 0 (the only ones
 * NCCL 2.29 takes); another is ncclInvalidArgument naming it.
 */
final class FacadeWindows {
    private static final long HANDLE_TAG = NcclFacade.HANDLE_TAG | 0x2000_0000_0000L;
    private static final AtomicLong NEXT = new AtomicLong(1);
    /** sizeof(ncclWaitSignalDesc_t): four ints, opCnt, peer, sigIdx, ctx (NCCL 2.29's nccl.h). */
    private static final int DESC_BYTES = 16;

    private FacadeWindows() {
    }

    /** {@code ncclCommWindowRegister}; {@code out} is the {@code ncclWindow_t*} (a PointerPointer, or a window set in place). */
    static int register(Pointer comm, Pointer buff, long size, Pointer out, int flags) {
        String call = "ncclCommWindowRegister";
        if (out == null || out instanceof PointerPointer && out.address() == 0) {
            return NcclFacade.failed(call, invalid("win: NULL"));
        }
        write(out, 0);
        FacadeComm c = find(comm);
        if (c == null) {
            return FacadeRegistration.unknown(call, comm);
        }
        long address = NcclFacade.address(buff);
        if (address == 0) {
            return NcclFacade.failed(call + " (" + c.label + ")", invalid("buff: NULL"));
        }
        try {
            Window w = c.comm.registerWindow(address, size, flags);
            long handle = HANDLE_TAG | NEXT.getAndIncrement();
            c.windows.put(handle, w);
            write(out, handle);
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call + " (" + c.label + ")", e);
        }
    }

    /** {@code ncclCommWindowDeregister}: NULL is no window, nothing to do (NCCL answers success for it too). */
    static int deregister(Pointer comm, Pointer win) {
        String call = "ncclCommWindowDeregister";
        FacadeComm c = find(comm);
        if (c == null) {
            return FacadeRegistration.unknown(call, comm);
        }
        long h = NcclFacade.address(win);
        if (h == 0) {
            return Result.SUCCESS.code();
        }
        Window w = c.windows.remove(h);
        if (w == null) {
            return NcclFacade.failed(call + " (" + c.label + ")", notMine("win", h));
        }
        try {
            w.close();
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call + " (" + c.label + ")", e);
        }
    }

    /** {@code ncclWinGetUserPtr}; {@code out} is the {@code void**} (a PointerPointer, or a Pointer set in place). */
    static int userPtr(Pointer comm, Pointer win, Pointer out) {
        String call = "ncclWinGetUserPtr";
        FacadeComm c = find(comm);
        if (c == null) {
            return FacadeRegistration.unknown(call, comm);
        }
        if (out == null || out instanceof PointerPointer && out.address() == 0) {
            return NcclFacade.failed(call + " (" + c.label + ")", invalid("outUserPtr: NULL"));
        }
        try {
            write(out, window(c, win, "win").userAddress());
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call + " (" + c.label + ")", e);
        }
    }

    static int putSignal(Pointer localbuff, long count, int datatype, int peer, Pointer peerWin, long peerWinOffset,
                         int sigIdx, int ctx, int flags, Pointer comm, CUstream_st stream) {
        String call = "ncclPutSignal";
        FacadeComm c = find(comm);
        if (c == null) {
            return FacadeRegistration.unknown(call, comm);
        }
        try {
            DataType t = DataType.fromCode(datatype);
            Window w = window(c, peerWin, "peerWin");
            checkZero(ctx, "ctx", flags);
            c.comm.putSignal(NcclFacade.address(localbuff), count, t, peer, w, peerWinOffset, sigIdx, c.stream(stream));
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call + " (" + c.label + ")", e);
        }
    }

    static int signal(int peer, int sigIdx, int ctx, int flags, Pointer comm, CUstream_st stream) {
        String call = "ncclSignal";
        FacadeComm c = find(comm);
        if (c == null) {
            return FacadeRegistration.unknown(call, comm);
        }
        try {
            checkZero(ctx, "ctx", flags);
            c.comm.signal(peer, sigIdx, c.stream(stream));
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call + " (" + c.label + ")", e);
        }
    }

    /** The descriptors are read from their memory (NCCL's layout), not through bytedeco's accessors. */
    static int waitSignal(int nDesc, Pointer signalDescs, Pointer comm, CUstream_st stream) {
        String call = "ncclWaitSignal";
        FacadeComm c = find(comm);
        if (c == null) {
            return FacadeRegistration.unknown(call, comm);
        }
        try {
            if (nDesc < 0) {
                throw invalid("nDesc: negative (" + nDesc + ")");
            }
            long base = signalDescs == null ? 0 : signalDescs.address() + DESC_BYTES * signalDescs.position();
            if (nDesc > 0 && signalDescs == null || nDesc > 0 && signalDescs.address() == 0) {
                throw invalid("signalDescs: NULL");
            }
            List<SignalWait> waits = new ArrayList<>(nDesc);
            for (int i = 0; i < nDesc; i++) {
                long d = base + (long) DESC_BYTES * i;
                checkZero(UNSAFE.getInt(d + 12), "signalDescs[" + i + "].ctx", 0);
                waits.add(new SignalWait(UNSAFE.getInt(d + 4), UNSAFE.getInt(d + 8), UNSAFE.getInt(d)));
            }
            c.comm.waitSignal(waits, c.stream(stream));
            return Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            return NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            return NcclFacade.internal(call + " (" + c.label + ")", e);
        }
    }

    private static Window window(FacadeComm c, Pointer win, String name) {
        long h = NcclFacade.address(win);
        if (h == 0) {
            throw invalid(name + ": NULL");
        }
        Window w = c.windows.get(h);
        if (w == null) {
            throw notMine(name, h);
        }
        return w;
    }

    /** FlexLink hands NCCL context 0 and flags 0, the only ones NCCL 2.29 takes. */
    private static void checkZero(int ctx, String ctxName, int flags) {
        if (ctx != 0) {
            throw invalid(ctxName + ": " + ctx + "; FlexLink's windows use NCCL's context 0");
        }
        if (flags != 0) {
            throw invalid("flags: " + flags + "; NCCL's one-sided calls take 0");
        }
    }

    private static FlexLinkException notMine(String name, long handle) {
        return invalid(name + ": 0x" + Long.toHexString(handle) + " is no window of this communicator "
                + "(deregistered already, or another communicator's)");
    }

    /** The communicator, also one whose non-blocking creation finished after the first lookup missed; or null. */
    private static FacadeComm find(Pointer comm) {
        FacadeComm c = NcclFacade.lookup(comm);
        return c != null ? c : FacadeRegistration.madeMeanwhile(comm);
    }

    private static void write(Pointer out, long value) {
        if (out instanceof PointerPointer) {
            UNSAFE.putLong(out.address() + 8L * out.position(), value);
        } else {
            NcclFacade.setAddress(out, value);
        }
    }

    private static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }
}
