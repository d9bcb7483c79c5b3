package io.flexlink.comm;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.launch.GroupedCalls;
import io.flexlink.launch.Groups;
import io.flexlink.launch.Launcher;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link FlexCommunicator}'s calls of one group at the group's end, in the two phases of {@link
 * io.flexlink.launch.Groups}: plan and launch the primary path (phase 1), then the auxiliary paths and the joins
 * (phase 3). A group of one (a call outside any group) runs under the lock its call holds ({@code alone}).
 *
 * <p>Several collectives of one communicator in a group may depend on each other (a later one reads what an earlier
 * one writes). With a primary path they run whole on it, in order, as NCCL would: NCCL launches the primary parts of
 * a group back to back on the stream, with no point where an earlier call's auxiliary part could be joined in
 * between. Without one (ranks sharing a GPU, or the PCIe path alone) each is split and <em>chained</em>: it is
 * launched in phase 3, after the call before it was joined into the caller's stream, so that its paths fork off a
 * stream that already holds the earlier call's results. Launching them all in phase 1 would record every fork before
 * any join, and a later call could read its input before the earlier call had written it.
 *
 * <p>The calls of one communicator in a group may come on several streams (one stream for its sends and receives,
 * NCCL's rule, and others for collectives). NCCL then makes the group's work wait for every one of them and holds
 * every one until it is done, as if posted on each ({@link GroupStreams}); chained calls on different streams are
 * also linked one to the next.
 */
final class GroupLaunch implements AutoCloseable {
    private final Launcher launcher;
    private final GroupedCalls grouped;
    private final CommLifecycle life;
    private final ReentrantLock lock;
    private final boolean hasPrimary;
    private final GroupStreams streams;
    /** Whether this group's collectives are chained (planned in phase 1, launched one after another in phase 3). */
    private boolean chained;

    GroupLaunch(Backend backend, int device, Launcher launcher, GroupedCalls grouped, CommLifecycle life,
                boolean hasPrimary) {
        this.streams = new GroupStreams(backend, device);
        this.launcher = launcher;
        this.grouped = grouped;
        this.life = life;
        this.lock = life.lock;
        this.hasPrimary = hasPrimary;
    }

    /** Phase 1: the transfers' primary part, then every collective planned and (unless chained) launched. */
    void primary(boolean alone) {
        if (!alone) {
            lock.lock();
        }
        try {
            if (!alone) {
                life.checkUsable(); // the group's calls were checked when they were made; time has passed since
                streams.joinAtStart(grouped);
            }
            int collectives = 0;
            RuntimeStream transfers = null;
            for (int i = 0; i < grouped.size(); i++) {
                CallPlan p = grouped.get(i);
                if (p.call.collective.pointToPoint()) {
                    launcher.planTransfer(p);
                    transfers = p.call.stream;
                } else {
                    collectives++;
                }
            }
            if (transfers != null) {
                launcher.launchPrimaryExchange(grouped, transfers);
            }
            boolean whole = hasPrimary && collectives > 1;
            chained = !hasPrimary && collectives > 1;
            for (int i = 0; i < grouped.size(); i++) {
                CallPlan p = grouped.get(i);
                if (p.call.collective.pointToPoint()) {
                    continue;
                }
                if (whole) {
                    launcher.planWhole(p);
                } else {
                    plan(p);
                }
                if (!chained) {
                    launcher.launchPrimary(p, !alone);
                }
            }
        } catch (RuntimeException | Error e) {
            Groups.keepFirst(e, this::discard); // the discard's failures are added to e
            throw e;
        } finally {
            if (!alone) {
                lock.unlock();
            }
        }
    }

    /** Phase 3, after the primary transport launched: each collective's auxiliary part and join, then the transfers'. */
    void auxiliary(boolean alone) {
        if (!alone) {
            lock.lock();
        }
        // how many of the group's first calls this phase is done with: a failure's discard leaves those alone
        int completed = 0;
        try {
            // aborted since phase 1 (watchdog, lost peer): the paths may be torn down already
            if (grouped.isEmpty() || life.teardown.done() || life.aborted() || life.abortRequested()) {
                return;
            }
            RuntimeStream transfers = null;
            RuntimeStream previous = null;
            for (int i = 0; i < grouped.size(); i++) {
                CallPlan p = grouped.get(i);
                if (p.call.collective.pointToPoint()) {
                    transfers = p.call.stream; // launched with the others after the loop: nothing to discard
                    completed = i + 1;
                    continue;
                }
                if (chained) {
                    streams.link(previous, p.call.stream);
                    launcher.launchPrimary(p, !alone); // its fork follows the previous call's join
                    previous = p.call.stream;
                }
                launcher.launchAuxiliary(p);
                launcher.done(p);
                completed = i + 1;
                life.health.used(p.call.stream); // its stream is watched for failures, and the watchdog sees its end
                CallWatch watch = life.watch;
                if (watch != null && !Launcher.captured(p)) {
                    watch.record(p.call.stream, p.call.collective, p.call.count, p.call.type, life.now());
                }
            }
            if (transfers != null) {
                launcher.launchAuxiliaryExchange(grouped, transfers);
                life.health.used(transfers);
            }
            streams.joinAtEnd();
        } catch (RuntimeException | Error e) {
            if (chained && !life.abortRequested()) {
                // the peers launch the chained calls this rank now will not, and would wait for them: tell them
                life.health.fail(e instanceof FlexLinkException f ? f : new FlexLinkException(Result.INTERNAL_ERROR,
                        "group launch failed: " + e, e));
            }
            int from = completed;
            Groups.keepFirst(e, () -> discardFrom(from)); // the discard's failures are added to e
            throw e;
        } finally {
            forget();
            if (!alone) {
                lock.unlock();
            }
        }
    }

    /**
     * Forgets the group's calls (the group failed, or another member's launch did): a call's part already handed to
     * the enqueue thread runs anyway, so its caller's stream is first joined to it ({@link Launcher#discard}); after a
     * teardown, only forgets.
     */
    void discard() {
        discardFrom(0);
    }

    /** {@link #discard()} of the group's calls from the {@code from}-th on (those before it were launched). */
    private void discardFrom(int from) {
        try {
            if (life.teardown.done()) {
                // aborted since phase 1: the launcher's parts are closed (and its enqueue thread stopped), so there is
                // nothing left to join or to mark read, and touching them would fail or allocate them again
                return;
            }
            Throwable first = null;
            for (int i = from; i < grouped.size(); i++) {
                CallPlan p = grouped.get(i);
                first = Groups.keepFirst(first, () -> launcher.discard(p));
            }
            Groups.rethrow(first);
        } finally {
            forget();
        }
    }

    /** The group's calls and streams, forgotten once it is launched or discarded. */
    private void forget() {
        grouped.clear();
        streams.forget();
        chained = false;
    }

    /** Frees the events that join a group's streams (at teardown, once no stream uses them). */
    @Override
    public void close() {
        streams.close();
    }

    private void plan(CallPlan p) {
        try {
            launcher.plan(p);
        } catch (FlexLinkException e) {
            // a peer's abort, seen at a decision point, ends this rank too; our own abort is recorded by whoever
            // asked for it
            throw e.result() == Result.REMOTE_ERROR && !life.abortRequested() ? life.health.fail(e) : e;
        }
    }
}
