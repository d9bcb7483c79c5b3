package io.flexlink.launch;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PrimaryTransport;
import java.util.ArrayList;
import java.util.List;

/**
 * NCCL's group semantics, per thread, and the one launch path of every call: a call outside a group is a
 * group of one ({@link #single}). Inside a group a communicator only records its calls; the group's end
 * launches them in three phases: every communicator plans its calls and enqueues their primary work (into
 * the primary transport's still open group), the transports end their groups (NCCL launches then), and
 * every communicator enqueues its auxiliary paths and joins them into the callers' streams. The auxiliary
 * work comes after the primary launch because a join enqueued before it would make the primary collective
 * wait for the auxiliary paths instead of running beside them. A group of one opens no transport group:
 * its primary work launches as it is enqueued, which is the same order.
 *
 * <p>A group is atomic, as NCCL's: once any call of it failed (a bad argument), its end launches nothing,
 * forgets every call of it, and throws that call's error; the communicators stay usable.
 */
public final class Groups {
    private static final ThreadLocal<Groups> CURRENT = ThreadLocal.withInitial(Groups::new);

    /** A communicator's part in a group's end. */
    public interface Member {
        /** Phase 1: plan the calls recorded in this group and enqueue their primary work. */
        void launchPrimary();

        /** Phase 3, after the primary transports launched: the auxiliary paths and the joins. */
        void launchAuxiliary();

        /** Instead of phases 1 or 3 when the group failed: forget the group's calls. */
        void discard();

        /** {@code ncclGroupSimulateEnd}: the seconds this communicator's calls of the group would take. */
        double estimateSeconds();

        /**
         * After the last phase, whatever happened in it: the calls this member held until the group was enqueued
         * ({@link #holding}) may run. Never throws.
         */
        default void releaseHeld() {
        }
    }

    private int depth;
    /** True while a group of several members launches: their calls may hold their work until it ends. */
    private boolean holding;
    private FlexLinkException failed;
    private final List<PrimaryTransport> started = new ArrayList<>();
    private final List<Member> members = new ArrayList<>();

    private Groups() {
    }

    public static Groups current() {
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
        Throwable failure = g.failed;
        try {
            if (failure != null) {
                for (Member m : g.members) {
                    keepFirst(failure, m::discard);
                }
                for (PrimaryTransport t : g.started) {
                    keepFirst(failure, t::groupEnd); // nothing of this group was enqueued into it
                }
                failure = new FlexLinkException(g.failed.result(), "groupEnd: the group was cancelled, nothing of "
                        + "it was launched, because a call of it failed: " + g.failed.detail(), g.failed);
            } else {
                g.holding = g.members.size() > 1;
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
            }
        } finally {
            if (g.holding) {
                g.holding = false;
                for (Member m : g.members) {
                    // also after a failure: a call handed to an enqueue thread is enqueued anyway
                    failure = keepFirst(failure, m::releaseHeld);
                }
            }
            g.started.clear();
            g.members.clear();
            g.failed = null;
        }
        rethrow(failure);
    }

    /**
     * {@code ncclGroupSimulateEnd}: ends the group like {@link #end} but launches nothing; the outermost end
     * returns the seconds its calls would take (the slowest communicator's: communicators run side by side) and
     * forgets them, as NCCL's simulation leaves nothing enqueued; an inner end returns NaN. A failed group throws
     * as {@link #end} does.
     */
    public static double simulateEnd() {
        Groups g = CURRENT.get();
        if (g.depth == 0) {
            throw new FlexLinkException(Result.INVALID_USAGE, "groupSimulateEnd: no group was started on this thread");
        }
        if (--g.depth > 0) {
            return Double.NaN;
        }
        double slowest = 0;
        Throwable failure = g.failed == null ? null : new FlexLinkException(g.failed.result(), "groupSimulateEnd: "
                + "the group was cancelled because a call of it failed: " + g.failed.detail(), g.failed);
        try {
            for (Member m : g.members) {
                if (failure == null) {
                    slowest = Math.max(slowest, m.estimateSeconds());
                }
                failure = keepFirst(failure, m::discard);
            }
            for (PrimaryTransport t : g.started) {
                failure = keepFirst(failure, t::groupEnd); // nothing of this group was enqueued into it
            }
        } finally {
            g.started.clear();
            g.members.clear();
            g.failed = null;
        }
        rethrow(failure);
        return slowest;
    }

    /** The phases of a group of one (a call outside any group): primary work, then the auxiliary paths. */
    public static void single(Member m) {
        try {
            m.launchPrimary();
        } catch (RuntimeException | Error e) {
            keepFirst(e, m::discard);
            throw e;
        }
        m.launchAuxiliary();
    }

    /** Throws {@code failure} (what {@link #keepFirst} kept), if any. */
    public static void rethrow(Throwable failure) {
        if (failure instanceof Error) {
            throw (Error) failure;
        }
        if (failure != null) {
            throw (RuntimeException) failure;
        }
    }

    /** Runs {@code step}; the first failure of a series of steps, later ones added to it as suppressed. */
    public static Throwable keepFirst(Throwable first, Runnable step) {
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

    /**
     * Lets every call of this process held until its group's end ({@code flexlink.groupGate}) run now, whichever
     * thread ends that group: an aborted communicator's teardown waits for the device's streams before it frees
     * (CUDA's frees wait for the whole device), and a held stream would otherwise wait for a thread that is itself
     * waiting, for the teardown or for the aborted communicator's lock. A hold only keeps the copies from running
     * while the group is enqueued, so letting it go early costs time, never a result. Never throws.
     */
    public static void letEveryHeldCallGo() {
        GroupGate.openEvery();
    }

    /** True while this thread ends a group of several members: a split call may hold its work until the end. */
    public boolean holding() {
        return holding;
    }

    /** True inside a group on this thread. */
    public static boolean active() {
        return CURRENT.get().depth > 0;
    }

    public boolean inGroup() {
        return depth > 0;
    }

    /** A call of this group failed: the group's end will launch nothing and report {@code e}. */
    public void fail(FlexLinkException e) {
        if (depth > 0 && failed == null) {
            failed = e;
        }
    }

    /** Opens the transport's group the first time one of its communicators is called in this group. */
    public void enter(PrimaryTransport t) {
        for (PrimaryTransport s : started) {
            if (s == t) {
                return;
            }
        }
        t.groupStart();
        started.add(t);
    }

    /** Adds a communicator that recorded its first call of this group. */
    public void join(Member m) {
        members.add(m);
    }
}
