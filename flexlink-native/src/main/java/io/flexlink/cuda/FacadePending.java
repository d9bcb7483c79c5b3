package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.bytedeco.javacpp.Pointer;

/**
 * Facade handles whose communicator is still being made (deferred to the group's end, or created in the
 * background for {@code ncclConfig_t.blocking = 0}) or whose creation failed. {@code ncclCommGetAsyncError}
 * of such a handle answers ncclInProgress, then the creation's error; other calls answer ncclInvalidArgument
 * while it is made (as NCCL's ncclCommEnsureReady), then the creation's error ({@link #forUse}). Once
 * made, the communicator is in {@link NcclFacade}'s table under the same handle and this entry is gone.
 * Only calls that miss the table look here, so the hot path never does.
 */
final class FacadePending {
    private static final Map<Long, Entry> PENDING = new ConcurrentHashMap<>();

    /** One handle's creation. */
    static final class Entry {
        final long handle;
        final String name;
        // guarded by this
        private int code = Result.IN_PROGRESS.code();
        private String message = "";
        /** Destroyed or aborted before it was made: close it as soon as it is. */
        private boolean discard;

        private Entry(long handle, String name) {
            this.handle = handle;
            this.name = name;
        }

        synchronized int code() {
            return code;
        }

        synchronized String message() {
            return message;
        }
    }

    private FacadePending() {
    }

    static Entry add(long handle, String name) {
        Entry e = new Entry(handle, name);
        PENDING.put(handle, e);
        return e;
    }

    /** The creation of {@code e} made {@code c}: into the table, or closed when the handle was released. */
    static void made(Entry e, FacadeComm c) {
        boolean discard;
        synchronized (e) {
            discard = e.discard;
            if (!discard) {
                NcclFacade.put(c); // before the entry goes, so that a caller always finds one of the two
            }
            e.code = Result.SUCCESS.code();
            PENDING.remove(e.handle);
        }
        if (discard) {
            c.comm.close();
        }
    }

    static void failed(Entry e, int code, String message) {
        synchronized (e) {
            e.code = code;
            e.message = message;
            if (e.discard) {
                PENDING.remove(e.handle);
            }
        }
    }

    /** The code of a handle that is not in the table: ncclInProgress, a creation's error, or ncclInvalidArgument. */
    static int code(Pointer comm) {
        Entry e = comm == null ? null : PENDING.get(comm.address());
        return e == null ? Result.INVALID_ARGUMENT.code() : e.code();
    }

    /**
     * What a call that needs the communicator answers for a handle not in the table ({@code code} from
     * {@link #code}), as NCCL's ncclCommEnsureReady does: ncclInvalidArgument while the creation is in progress
     * (the call is refused; ncclInProgress would say it was accepted), else {@code code}.
     */
    static int forUse(String call, int code) {
        if (code != Result.IN_PROGRESS.code()) {
            return code;
        }
        return NcclFacade.failed(call, new FlexLinkException(Result.INVALID_ARGUMENT, "comm: used before "
                + "its creation returned ncclSuccess (poll ncclCommGetAsyncError until it does)"));
    }

    /** {@link #forUse(String, int)} of the code of {@code comm}, a handle that is not in the table. */
    static int forUse(String call, Pointer comm) {
        return forUse(call, code(comm));
    }

    /** The creation error of a handle that is not in the table, or null. */
    static String message(Pointer comm) {
        Entry e = comm == null ? null : PENDING.get(comm.address());
        return e == null || e.code() == Result.IN_PROGRESS.code() ? null : e.message();
    }

    /**
     * {@code ncclCommDestroy}/{@code ncclCommAbort} of a handle that is not in the table: a failed one is
     * forgotten, one still in progress is closed as soon as it is made; ncclInvalidArgument when unknown.
     */
    static int release(Pointer comm) {
        Entry e = comm == null ? null : PENDING.get(comm.address());
        if (e == null) {
            return Result.INVALID_ARGUMENT.code();
        }
        synchronized (e) {
            e.discard = true;
            if (e.code != Result.IN_PROGRESS.code()) {
                PENDING.remove(e.handle);
            }
        }
        return Result.SUCCESS.code();
    }
}
