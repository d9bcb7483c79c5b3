package io.flexlink.comm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PrimaryTransport;
import java.util.ArrayList;
import java.util.List;

/**
 * NCCL's group semantics, per thread. Inside a group a communicator only records its calls; the group's
 * end launches them in three phases: every communicator enqueues its primary work (into the primary
 * transport's still open group), the transports end their groups (NCCL launches then), and every
 * communicator enqueues its auxiliary paths and joins them into the callers' streams. The auxiliary work
 * comes after the primary launch because a join enqueued before it would make the primary collective
 * wait for the auxiliary paths instead of running beside them.
 */
public final class Groups {
    private static final ThreadLocal<Groups> CURRENT = ThreadLocal.withInitial(Groups::new);

    /** A communicator's part in a group's end. */
    interface Member {
        /** Phase 1: enqueue the primary work of the calls recorded in this group. */
        void launchPrimary();

        /** Phase 3, after the primary transports launched: the auxiliary paths and the joins. */
        void launchAuxiliary();

        /** Instead of phase 3 when a primary launch failed: forget the group's calls. */
        void discard();
    }

    private int depth;
    private final List<PrimaryTransport> started = new ArrayList<>();
    private final List<Member> members = new ArrayList<>();

    private Groups() {
    }

    static Groups current() {
        return CURRENT.get();
    }

    /** {@code ncclGroupStart}. */
    public static void start() {
        CURRENT.get().depth++;
    }

    /**
     * {@code ncclGroupEnd}: launches the group's calls. Every phase runs for every member even when one
     * fails (a transport's group must end, or the thread would stay inside it); the first failure is thrown.
     */
    public static void end() {
        Groups g = CURRENT.get();
        if (g.depth == 0) {
            throw new FlexLinkException(Result.INVALID_USAGE, "groupEnd: no group was started on this thread");
        }
        if (--g.depth > 0) {
            return;
        }
        Throwable failure = null;
        try {
            for (Member m : g.members) {
                failure = keepFirst(failure, m::launchPrimary);
            }
            boolean launched = true;
            for (PrimaryTransport t : g.started) {
                Throwable before = failure;
                failure = keepFirst(failure, t::groupEnd);
                launched &= failure == before;
            }
            for (Member m : g.members) {
                // a primary launch that failed leaves nothing for the auxiliary paths to run beside
                failure = keepFirst(failure, launched ? m::launchAuxiliary : m::discard);
            }
        } finally {
            g.started.clear();
            g.members.clear();
        }
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        if (failure != null) {
            throw (RuntimeException) failure;
        }
    }

    private static Throwable keepFirst(Throwable first, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException | Error e) {
            if (first == null) {
                return e;
            }
            first.addSuppressed(e);
        }
        return first;
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

    /** Adds a communicator that recorded its first call of this group. */
    void join(Member m) {
        members.add(m);
    }
}
