package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.PreMulSum;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.balance.CallTimer;
import io.flexlink.balance.PathCounters;
import io.flexlink.balance.Shares;
import io.flexlink.launch.GroupEstimate;
import io.flexlink.launch.GroupedCalls;
import io.flexlink.launch.Groups;
import io.flexlink.launch.Launcher;
import io.flexlink.path.Path;
import io.flexlink.path.PrimaryPath;
import io.flexlink.plan.CallPlan;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.OneSided;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.validate.AllToAllvArgs;
import io.flexlink.validate.Validator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.DoubleSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine behind {@link Communicator}, one class per stage: validate ({@link Validator}) → record the
 * call into its group ({@link Groups}; a call outside a group is a group of one) → at the group's end plan
 * ({@link Launcher#plan}: the balancer's decide, the split) → launch the primary path → launch the
 * auxiliary paths → join; the balancer's {@code record} follows from the timing events ({@link CallTimer}).
 * The primary path works on the caller's stream itself, so a call that stays on it costs what the primary
 * collective costs. Nothing here waits for the device.
 *
 * <p>Threads: calls are serialized by one lock (two threads may share a communicator; the order of calls
 * must still be the same on every rank). {@link #getAsyncError()} never blocks, {@link #abort()} is safe
 * from any thread. Errors: see {@link CommHealth} (the first asynchronous error sticks, reaches the peers,
 * and makes every later call throw it), {@link Watchdog} (timeouts) and {@link Teardown} (freeing without
 * hanging); docs/operations.md says what an application does with each.
 */
public final class FlexCommunicator extends ParentCommunicator {
    private static final Logger LOG = LoggerFactory.getLogger(FlexCommunicator.class);

    private final Backend backend;
    private final PrimaryTransport transport;
    private final boolean hasPrimary;
    /** What a registration registers with too (NCCL's ncclCommRegister), or null. */
    private final PrimaryPath primaryPath;
    private final Shares shares;
    private final PathCounters counters;
    private final CallTimer timer;
    private final Launcher launcher;
    private final CommLifecycle life;
    private final ReentrantLock lock;
    private final CommHealth health;
    /** Null when the watchdog is off. */
    private final CallWatch watch;
    /** This communicator's calls of the current group (or the one call of a group of one). */
    private final GroupedCalls grouped;
    private final AllToAllvArgs allToAllvArgs = new AllToAllvArgs();

    FlexCommunicator(Backend backend, PrimaryTransport transport, int rank, int size, int device, Path primary,
                     List<Path> auxPaths, Shares shares, long minSplitBytes, AutoCloseable resources,
                     Duration timeout, Runnable tellPeers, boolean enqueueThread, boolean groupGate,
                     CommSplitter splitter) {
        super(rank, size, device, splitter, backend);
        this.backend = backend;
        this.transport = transport;
        this.hasPrimary = primary != null;
        this.primaryPath = primary instanceof PrimaryPath p ? p : null;
        Path[] aux = auxPaths.toArray(new Path[0]);
        this.shares = shares;
        this.grouped = new GroupedCalls(aux.length);
        List<String> names = PathNames.of(primary, aux);
        int[] streams = PathNames.streams(aux);
        this.counters = new PathCounters(names);
        this.timer = shares.timed() ? new CallTimer(backend, device, streams, shares, counters) : null;
        this.launcher = new Launcher(backend, device, rank, size, primary, aux, shares, minSplitBytes, counters, timer,
                enqueueThread, groupGate);
        this.life = new CommLifecycle(backend, rank, size, device, primary, aux, timeout, toString(), tellPeers,
                launcher::drainForClose, launcher::stopAndRelease);
        this.lock = life.lock;
        this.health = life.health;
        this.watch = life.watch;
        GroupLaunch phases = new GroupLaunch(backend, device, launcher, grouped, life, hasPrimary);
        life.teardown.then(phases);
        DoubleSupplier estimate = () -> GroupEstimate.seconds(grouped, shares, size);
        this.member = new GroupMember(() -> phases.primary(false), () -> phases.auxiliary(false), this::underCallLock,
                estimate, phases::discard, launcher::releaseHeld);
        this.alone = new GroupMember(() -> phases.primary(true), () -> phases.auxiliary(true), this::underCallLock,
                estimate, phases::discard, () -> { });
        life.teardown.then(launcher);
        life.teardown.then(timer);
        life.teardown.then(watch);
        life.teardown.then(resources);
        LOG.debug("INIT rank {}/{} device {} paths {}", rank, size, device, names);
        life.start();
    }

    // ---- validate, then record into the group (a group of one outside a group) ----

    @Override
    public void allToAllv(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                          long[] recvDispls, DataType type, Stream stream) {
        checkNotClosed();
        AllToAllV.run(this, allToAllvArgs, send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, stream);
    }

    @Override
    protected void checkSplittable() {
        life.checkSplittable();
    }

    /** A revoke, also after an error (a finalized one is refused next); stopped staging cannot restart. */
    @Override
    protected void stopBeforeShrink() {
        if (!life.revoked() && !life.finalized()) {
            life.revoke();
        }
    }

    @Override
    public void finalizeComm() {
        life.finalizeComm(Groups.active());
    }

    @Override
    public void revoke() {
        life.revoke();
    }

    @Override
    protected void checkNotClosed() {
        life.checkNotClosed();
    }

    /** Registered with the primary transport too, under the call lock ({@link #oneSided}). */
    @Override
    protected AutoCloseable registerBelow(long address, long bytes) {
        return oneSided((b, calls, whyNone) -> {
            Validator.checkRegistration(b, address, bytes, device);
            return underLock(lock, primaryPath == null ? null : primaryPath.register(address, bytes));
        });
    }

    /** Under the call lock: an NCCL communicator serves one thread at a time. */
    @Override
    protected <T> T oneSided(OneSided.Call<T> call) {
        lock.lock();
        try {
            life.checkUsable();
            OneSided calls = primaryPath == null ? null : primaryPath.oneSided();
            return call.run(backend, calls, calls != null ? null : PathNames.noOneSided(hasPrimary, transport));
        } finally {
            lock.unlock();
        }
    }

    @Override
    protected void run(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
             Stream userStream) {
        enqueue(c, send, recv, count, type, op, null, root, userStream);
    }

    /** A PreMulSum is a SUM of inputs the launcher first multiplies by the scalar ({@link Launcher}). */
    @Override
    protected void runPreMulSum(Collective c, long send, long recv, long count, DataType type, PreMulSum op, int root,
                                Stream userStream) {
        enqueue(c, send, recv, count, type, ReduceOp.SUM, op, root, userStream);
    }

    private void enqueue(Collective c, long send, long recv, long count, DataType type, ReduceOp op, PreMulSum preMul,
                         int root, Stream userStream) {
        Groups group = Groups.current();
        lock.lock();
        try {
            life.checkUsable();
            PreMulSumOp pm = preMul == null ? null : checkPreMulSum(preMul, type);
            FlexLinkException enqueueFailed = launcher.workerFailure();
            if (enqueueFailed != null) {
                throw health.fail(enqueueFailed); // the peers are told; every later call throws it
            }
            Validator.checkCall(c, send, recv, count, type, op, root, rank, size);
            Validator.checkMemory(backend, c, send, recv, count, type, root, rank, size, device);
            RuntimeStream stream = Validator.checkStream(backend, userStream, device);
            stream.capturedBy(life);
            if (count == 0) {
                return;
            }
            CallStreams.checkGroup(grouped, group, c, stream, rank);
            CallPlan plan = grouped.next();
            plan.call.set(c, send, recv, count, type, op, root, stream);
            if (pm != null) {
                plan.call.preMulSum(pm.address(), pm.bits());
            }
            if (group.inGroup()) {
                // launched by the group's end (NCCL launches its part of a group there too)
                if (grouped.size() == 1) {
                    group.join(member);
                    grouped.owner(group);
                }
                if (hasPrimary) {
                    group.enter(transport);
                }
                health.used(stream);
                return;
            }
            CallWatch w = watch;
            if (w != null) {
                w.enter(c, life.now());
            }
            try {
                Groups.single(alone);
            } finally {
                if (w != null) {
                    w.exit();
                }
            }
        } catch (FlexLinkException e) {
            group.fail(e); // NCCL's groups are atomic: nothing of this group will be launched
            throw e;
        } finally {
            lock.unlock();
        }
    }

    // ---- the group's end: plan, launch ----

    private final Groups.Member member;
    /**
     * A call outside any group: checked by {@link #enqueue} a moment ago, and launched under the lock it still
     * holds (taking it again would cost a reentrant acquire and release per phase).
     */
    private final Groups.Member alone;

    /** {@code part} under the call lock (a group member's discarding and estimate). */
    private <T> T underCallLock(java.util.function.Supplier<T> part) {
        lock.lock();
        try {
            return part.get();
        } finally {
            lock.unlock();
        }
    }

    // ---- state ----

    /** The first asynchronous error (polled now if the communicator's lock is free); never blocks. */
    @Override
    public Result getAsyncError() {
        Result revoked = life.revokedResult();
        return revoked != null ? revoked : CommHealth.result(health.poll(), life.aborted());
    }

    @Override
    public CommStats stats() {
        FlexLinkException e = health.poll();
        if (timer != null) {
            life.unlessTorn(timer::poll);
        }
        return new CommStats(counters.totals(), shares.shareTable(), shares.history(), shares.stageTable(),
                CommHealth.result(e, life.aborted()), e != null ? e.detail() : life.aborted() ? "aborted" : null);
    }

    /**
     * Hands the balancer this rank's time outside this communicator around a call of {@code collective} of
     * {@code count} elements of {@code type} ({@link Shares#outside}), in the bytes per rank its plans use.
     */
    void outsideTime(Collective collective, long count, DataType type, float seconds) {
        shares.outside(collective, count * type.size() * (collective.blocked() ? size() : 1), seconds);
    }

    /** True once an abort was asked for, by anyone: a wait for the peers' balancer agreement gives up. */
    boolean abortRequested() {
        return life.abortRequested();
    }

    /** Tells every peer, aborts the primary transport, then frees what no stream uses ({@link CommLifecycle#abort}). */
    @Override
    public void abort() {
        life.abort();
        closeRegistrations(); // the transports are aborted: NCCL freed its registrations
    }

    /** Waits for this communicator's own enqueued work (unless it failed or was aborted), then frees it. */
    @Override
    public void close() {
        life.close();
        closeRegistrations(); // after the primary transport's close, which frees NCCL's registrations once its work is done
        splitter.closeParent(); // the ranks' rendezvous outlives an abort or a revoke: a split may follow those
    }

    /** Moves this communicator to another watchdog (tests: one with a manual clock). */
    void useWatchdog(Watchdog w) {
        life.useWatchdog(w);
    }

    @Override
    public String toString() {
        return "Communicator[rank " + rank + "/" + size + ", device " + device + ", " + backend.name() + "]";
    }
}
