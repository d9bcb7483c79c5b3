package io.flexlink.comm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PrimaryTransport;
import java.util.ArrayList;
import java.util.List;

/**
 * NCCL's group semantics, per thread. Inside a group the primary transport defers its launches to the
 * group's end (NCCL does), so joining the auxiliary paths into the caller's stream must be deferred too:
 * a join enqueued before the primary launch would make the primary collective wait for the auxiliary
 * paths instead of running beside them.
 */
public final class Groups {
    private static final ThreadLocal<Groups> CURRENT = ThreadLocal.withInitial(Groups::new);

    private int depth;
    private final List<PrimaryTransport> started = new ArrayList<>();
    private final List<Runnable> deferred = new ArrayList<>();

    private Groups() {
    }

    static Groups current() {
        return CURRENT.get();
    }

    /** {@code ncclGroupStart}. */
    public static void start() {
        CURRENT.get().depth++;
    }

    /** {@code ncclGroupEnd}: launches the primary calls of the group, then joins the auxiliary paths. */
    public static void end() {
        Groups g = CURRENT.get();
        if (g.depth == 0) {
            throw new FlexLinkException(Result.INVALID_USAGE, "groupEnd: no group was started on this thread");
        }
        if (--g.depth > 0) {
            return;
        }
        FlexLinkException failure = null;
        for (PrimaryTransport t : g.started) {
            try {
                t.groupEnd();
            } catch (FlexLinkException e) {
                failure = failure == null ? e : failure;
            }
        }
        g.started.clear();
        for (Runnable r : g.deferred) {
            r.run();
        }
        g.deferred.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** True inside a group on this thread. */
    public static boolean active() {
        return CURRENT.get().depth > 0;
    }

    boolean inGroup() {
        return depth > 0;
    }

    /** Opens the transport's group the first time one of its communicators is called in this group. */
    void enter(PrimaryTransport t) {
        for (PrimaryTransport s : started) {
            if (s == t) {
                return;
            }
        }
        t.groupStart();
        started.add(t);
    }

    void defer(Runnable join) {
        deferred.add(join);
    }
}
