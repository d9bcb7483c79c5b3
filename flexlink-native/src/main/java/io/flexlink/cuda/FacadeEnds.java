package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.bytedeco.cuda.nccl.ncclComm;

/**
 * {@code ncclCommFinalize} and {@code ncclCommRevoke} behind {@link FlexNccl}, on
 * {@link io.flexlink.Communicator#finalizeComm()} and {@link io.flexlink.Communicator#revoke()}. As NCCL: a NULL
 * communicator is a success; each may be called once and not both (ncclInvalidArgument, decided at the call, even
 * when the work runs later); a non-blocking communicator ({@code ncclConfig_t.blocking = 0}) answers ncclInProgress
 * and reports the state through ncclCommGetAsyncError until it is done; a finalize inside ncclGroupStart/End runs
 * at the outermost ncclGroupEnd, after the group's collectives launched (NCCL defers it to the group's end too).
 * A revoke runs at once, inside a group too: stopping the work is what it is for. ncclCommDestroy waits for a
 * background one to return before it frees the communicator.
 */
final class FacadeEnds {
    /** Per thread: the finalizes recorded in its open group. */
    private static final ThreadLocal<List<FacadeComm>> DEFERRED = ThreadLocal.withInitial(ArrayList::new);

    private FacadeEnds() {
    }

    static int finalizeComm(ncclComm comm) {
        return end(comm, "ncclCommFinalize", c -> c.comm.finalizeComm(), true);
    }

    static int revoke(ncclComm comm, int flags) {
        if (comm == null || comm.address() == 0) {
            return Result.SUCCESS.code();
        }
        if (flags != 0) {
            return NcclFacade.failed("ncclCommRevoke", new FlexLinkException(Result.INVALID_ARGUMENT, "revokeFlags: "
                    + flags + " (NCCL_REVOKE_DEFAULT, 0, is the only one)"));
        }
        return end(comm, "ncclCommRevoke", c -> c.comm.revoke(), false);
    }

    private static int end(ncclComm comm, String call, Consumer<FacadeComm> how, boolean deferInGroup) {
        if (comm == null || comm.address() == 0) {
            return Result.SUCCESS.code();
        }
        FacadeComm c = NcclFacade.lookup(comm);
        if (c == null) {
            return FacadePending.forUse(call, comm); // being made, its creation's error, unknown
        }
        if (!c.end.compareAndSet(-1, Result.IN_PROGRESS.code())) {
            return NcclFacade.failed(call + " (" + c.label + ")", new FlexLinkException(Result.INVALID_ARGUMENT,
                    "comm: finalized or revoked already (each once, and not both)"));
        }
        if (deferInGroup && NcclFacade.groupDepth() > 0) {
            DEFERRED.get().add(c);
            return Result.SUCCESS.code();
        }
        if (!c.blocking) {
            Thread t = new Thread(() -> run(c, call, how, true), "flexlink-nccl-end-" + Long.toHexString(c.handle));
            t.setDaemon(true);
            c.ender = t;
            t.start();
            return Result.IN_PROGRESS.code();
        }
        return run(c, call, how, false);
    }

    /**
     * Runs the end and records its result in the handle (what ncclCommGetAsyncError reports of it). A refusal
     * (the communicator's state allowed no such end: nothing happened) is forgotten again when the caller got it
     * as the call's result; a background end keeps it, since the caller learns it only from the async error.
     */
    private static int run(FacadeComm c, String call, Consumer<FacadeComm> how, boolean background) {
        int rc;
        try {
            how.accept(c);
            rc = Result.SUCCESS.code();
        } catch (FlexLinkException e) {
            rc = NcclFacade.failed(call + " (" + c.label + ")", e);
        } catch (RuntimeException | LinkageError e) {
            rc = NcclFacade.internal(call + " (" + c.label + ")", e);
        }
        boolean refused = rc == Result.INVALID_ARGUMENT.code() || rc == Result.INVALID_USAGE.code();
        c.end.set(refused && !background ? -1 : rc);
        return rc;
    }

    /** At the outermost group end: this thread's deferred finalizes, in call order; the first failure's code. */
    static int runDeferred() {
        List<FacadeComm> mine = DEFERRED.get();
        if (mine.isEmpty()) {
            return Result.SUCCESS.code();
        }
        List<FacadeComm> todo = new ArrayList<>(mine);
        mine.clear();
        int first = Result.SUCCESS.code();
        for (FacadeComm c : todo) {
            // each rank's finalize waits for its own part only; every part was enqueued by the group's launch
            int rc = run(c, "ncclCommFinalize", x -> x.comm.finalizeComm(), false); // the group end returns it
            first = first != Result.SUCCESS.code() ? first : rc;
        }
        return first;
    }

    /** What ncclCommGetAsyncError reports of an end: ncclInProgress while it runs, its error; else -1. */
    static int state(FacadeComm c) {
        int e = c.end.get();
        return e == Result.IN_PROGRESS.code() || e > 0 ? e : -1;
    }

    /** Before ncclCommDestroy/Abort frees it: a background finalize or revoke returned. */
    static void awaitEnder(FacadeComm c) {
        Thread t = c.ender;
        boolean interrupted = false;
        while (t != null && t.isAlive()) {
            try {
                t.join(); // bounded: a finalize's drain ends by the watchdog, a revoke's is bounded itself
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
