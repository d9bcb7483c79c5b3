package io.flexlink.comm;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.balance.Balancer;
import io.flexlink.balance.ShareProvider;
import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PrimaryTransport;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine behind {@link Communicator}: validate → plan (shares) → split (aligned ranges) → fork the
 * auxiliary paths off the caller's stream → enqueue each path's range → join them back. The primary path
 * works on the caller's stream itself, so a call that stays on it costs what the primary collective costs.
 * Nothing here waits for the device.
 *
 * <p>Threads: calls are serialized by one lock (two threads may share a communicator; the order of calls
 * must still be the same on every rank). {@link #getAsyncError()} never blocks, {@link #abort()} is safe
 * from any thread. Errors: see {@link CommHealth} (the first asynchronous error sticks, reaches the peers,
 * and makes every later call throw it), {@link Watchdog} (timeouts) and {@link Teardown} (freeing without
 * hanging); docs/operations.md says what an application does with each.
 */
public final class FlexCommunicator extends CollectiveApi {
    private static final Logger LOG = LoggerFactory.getLogger(FlexCommunicator.class);

    private final Backend backend;
    private final PrimaryTransport transport;
    /** Primary (or null) then auxiliary paths, in the order of {@link #lengths}. */
    private final Path primary;
    private final Path[] aux;
    private final ShareProvider shares;
    private final SplitPlanner planner;
    private final CollectiveCall call = new CollectiveCall();
    private final double[] fractions;
    private final long[] lengths;
    private final RuntimeEvent fork;
    private final RuntimeEvent[][] joins;
    private final PathCounters counters;
    private final Balancer balancer;
    private final CallTimer timer;
    private final CommLifecycle life;
    private final ReentrantLock lock;
    private final CommHealth health;
    /** Null when the watchdog is off. */
    private final CallWatch watch;

    FlexCommunicator(Backend backend, PrimaryTransport transport, int rank, int size, int device, Path primary,
                     List<Path> auxPaths, ShareProvider shares, long minSplitBytes, AutoCloseable resources,
                     Duration timeout) {
        super(rank, size, device);
        this.backend = backend;
        this.transport = transport;
        this.primary = primary;
        this.aux = auxPaths.toArray(new Path[0]);
        this.shares = shares;
        this.planner = new SplitPlanner(primary != null, minSplitBytes);
        this.fractions = new double[aux.length];
        this.lengths = new long[aux.length + 1];
        this.grouped = new GroupedCalls(aux.length + 1);
        this.fork = backend.createEvent(device, false);
        this.joins = new RuntimeEvent[aux.length][];
        for (int i = 0; i < aux.length; i++) {
            RuntimeStream[] s = aux[i].streams();
            joins[i] = new RuntimeEvent[s.length];
            for (int k = 0; k < s.length; k++) {
                joins[i][k] = backend.createEvent(device, false);
            }
        }
        List<String> names = new ArrayList<>();
        names.add(primary == null ? "primary(off)" : primary.name());
        for (Path p : aux) {
            names.add(p.name());
        }
        this.counters = new PathCounters(names);
        this.balancer = shares instanceof Balancer ? (Balancer) shares : null;
        this.timer = balancer != null ? new CallTimer(backend, device, aux, balancer, counters) : null;
        this.life = new CommLifecycle(backend, rank, size, device, primary, aux, timeout, toString());
        this.lock = life.lock;
        this.health = life.health;
        this.watch = life.watch;
        Teardown teardown = life.teardown;
        teardown.then(fork);
        for (RuntimeEvent[] es : joins) {
            for (RuntimeEvent e : es) {
                teardown.then(e);
            }
        }
        teardown.then(timer);
        teardown.then(watch);
        teardown.then(resources);
        LOG.debug("INIT rank {}/{} device {} paths {}", rank, size, device, names);
        life.start();
    }

    /** The paths in use, primary first (absent when off). */
    public List<String> pathNames() {
        return counters.names();
    }

    // ---- the collectives ----

    @Override
    void checkNotClosed() {
        life.checkNotClosed();
    }

    @Override
    void run(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
             Stream userStream) {
        lock.lock();
        try {
            life.checkUsable();
            Validator.checkCall(c, send, recv, count, type, op, root, rank, size);
            Validator.checkMemory(backend, c, send, recv, count, type, root, rank, size, device);
            CallWatch w = watch;
            if (w != null) {
                w.enter(c, life.now());
            }
            try {
                enqueue(c, send, recv, count, type, op, root, userStream);
            } finally {
                if (w != null) {
                    w.exit();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private void enqueue(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
                         Stream userStream) {
        if (userStream == null) {
            throw Validator.invalid("stream: null");
        }
        RuntimeStream stream = backend.runtimeStream(userStream);
        if (stream.device() != device) {
            throw Validator.invalid("stream: belongs to device " + stream.device()
                    + ", the communicator's device is " + device);
        }
        if (count == 0) {
            return;
        }
        Groups group = Groups.current();
        if (group.inGroup() && primary != null) {
            // recorded now, launched by the group's end (NCCL launches its part of a group there too)
            if (!grouped.isEmpty() && grouped.owner != group) {
                throw new FlexLinkException(Result.INVALID_USAGE, "communicator: rank " + rank + " has calls in "
                        + "another thread's open group; one communicator's group calls come from one thread");
            }
            group.enter(transport);
            if (grouped.isEmpty()) {
                group.join(groupMember);
                grouped.owner = group;
            }
            grouped.next().set(c, send, recv, count, type, op, root, stream);
            health.used(stream);
            return;
        }
        call.set(c, send, recv, count, type, op, root, stream);
        launchPrimary(call);
        launchAuxiliary(call);
    }

    /**
     * Plans {@code c} and enqueues its primary range (after the fork, when split). Leaves in {@link #split},
     * {@link #slot} and {@link #lengths} what {@link #launchAuxiliary} needs. The primary collective goes
     * first: the auxiliary paths enqueue many small operations (host time that would delay the primary
     * launch), and they only wait for the fork, so they still start together with it.
     */
    private void launchPrimary(CollectiveCall c) {
        shares.shares(c.collective, c.bytes(size), fractions);
        split = planner.plan(c, size, fractions, lengths);
        int ch = timer == null ? -1 : balancer.timedChannel();
        slot = ch < 0 ? -1 : timer.begin(ch, balancer.version(ch), c.stream);
        if (split) {
            c.stream.record(fork);
        }
        if (lengths[0] > 0) {
            primary.enqueue(c, 0, lengths[0]);
            counters.add(0, lengths[0] * c.type.size());
        }
    }

    /** The rest of a call after its primary launch: the primary's timing, the auxiliary paths, the joins. */
    private void launchAuxiliary(CollectiveCall c) {
        if (slot >= 0 && lengths[0] > 0) {
            timer.primaryDone(slot, c.stream);
        }
        if (split) {
            enqueueAux(c, lengths, slot);
            for (int i = 0; i < aux.length; i++) {
                if (lengths[i + 1] > 0) {
                    RuntimeStream[] ps = aux[i].streams();
                    for (int k = 0; k < ps.length; k++) {
                        c.stream.waitEvent(slot >= 0 ? timer.auxDone(slot, i, k) : joins[i][k]);
                    }
                }
            }
        }
        finish(c.collective, c.count, c.type, c.stream);
    }

    /** Enqueues every auxiliary path's range of {@code c}; they wait for the fork recorded on the caller's stream. */
    private void enqueueAux(CollectiveCall c, long[] len, int slot) {
        long offset = len[0];
        for (int i = 0; i < aux.length; i++) {
            long n = len[i + 1];
            if (n == 0) {
                continue;
            }
            RuntimeStream[] ps = aux[i].streams();
            for (RuntimeStream s : ps) {
                s.waitEvent(fork);
            }
            aux[i].enqueue(c, offset, n);
            for (int k = 0; k < ps.length; k++) {
                ps[k].record(slot >= 0 ? timer.auxDone(slot, i, k) : joins[i][k]);
            }
            offset += n;
            counters.add(i + 1, n * c.type.size());
        }
    }

    /** After a call's work: its stream is watched for failures, and the watchdog's done event is recorded. */
    private void finish(Collective c, long count, DataType type, RuntimeStream stream) {
        health.used(stream);
        if (watch != null) {
            watch.record(stream, c, count, type, life.now());
        }
    }

    // ---- groups ----

    /** This communicator's calls of the current group, launched by {@link Groups#end()}. */
    private final GroupedCalls grouped;
    private final Groups.Member groupMember = new Groups.Member() {
        @Override
        public void launchPrimary() {
            launchGroupedPrimary();
        }

        @Override
        public void launchAuxiliary() {
            launchGroupedAuxiliary();
        }

        @Override
        public void discard() {
            lock.lock();
            try {
                grouped.clear();
            } finally {
                lock.unlock();
            }
        }
    };
    /** What {@link #launchPrimary} decided for the call whose auxiliary part is still to be enqueued. */
    private boolean split;
    private int slot = -1;

    /**
     * Phase 1 of a group's end. A communicator with one call in the group splits it as outside a group.
     * With several calls, a later call may read what an earlier one writes, and NCCL's launch of the group
     * runs the primary parts back to back on the stream, with no point where an earlier call's auxiliary
     * part could be joined in between; so such a group runs every call whole on the primary path, in order,
     * exactly as NCCL would.
     */
    private void launchGroupedPrimary() {
        lock.lock();
        try {
            split = false;
            slot = -1;
            life.checkUsable();
            if (grouped.size() == 1) {
                launchPrimary(grouped.get(0));
                // another thread's call may run between the phases (the lock is not held across NCCL's launch)
                grouped.split = split;
                grouped.slot = slot;
                System.arraycopy(lengths, 0, grouped.lengths, 0, lengths.length);
                return;
            }
            for (int i = 0; i < grouped.size(); i++) {
                CollectiveCall c = grouped.get(i);
                primary.enqueue(c, 0, c.count);
                counters.add(0, c.count * c.type.size());
            }
        } catch (RuntimeException | Error e) {
            grouped.clear();
            throw e;
        } finally {
            lock.unlock();
        }
    }

    /** Phase 3 of a group's end, after the primary transport launched. */
    private void launchGroupedAuxiliary() {
        lock.lock();
        try {
            // aborted since phase 1 (watchdog, lost peer): the paths may be torn down already
            if (grouped.isEmpty() || life.teardown.done() || life.aborted() || life.abortRequested()) {
                return;
            }
            if (grouped.size() == 1) {
                split = grouped.split;
                slot = grouped.slot;
                System.arraycopy(grouped.lengths, 0, lengths, 0, lengths.length);
                launchAuxiliary(grouped.get(0));
            } else {
                for (int i = 0; i < grouped.size(); i++) {
                    CollectiveCall c = grouped.get(i);
                    finish(c.collective, c.count, c.type, c.stream);
                }
            }
        } finally {
            grouped.clear();
            lock.unlock();
        }
    }

    // ---- state ----

    /** The first asynchronous error (polled now if the communicator's lock is free); never blocks. */
    @Override
    public Result getAsyncError() {
        return CommHealth.result(health.poll(), life.aborted());
    }

    @Override
    public CommStats stats() {
        FlexLinkException e = health.poll();
        if (timer != null) {
            lock.lock();
            try {
                if (!life.teardown.done()) {
                    timer.poll();
                }
            } finally {
                lock.unlock();
            }
        }
        return new CommStats(counters.totals(),
                balancer == null ? new LinkedHashMap<>() : balancer.shareTable(),
                balancer == null ? new ArrayList<>() : balancer.history(),
                balancer == null ? new LinkedHashMap<>() : balancer.stageTable(),
                CommHealth.result(e, life.aborted()), e != null ? e.detail() : life.aborted() ? "aborted" : null);
    }

    /** The primary path's communicator (NCCL on CUDA), or null when the primary path is off. */
    public io.flexlink.runtime.PrimaryComm primaryComm() {
        return primary instanceof io.flexlink.path.PrimaryPath ? ((io.flexlink.path.PrimaryPath) primary).comm() : null;
    }

    /** The balancer, or null when shares are fixed. */
    public Balancer balancer() {
        return balancer;
    }

    /** True once an abort was asked for, by anyone: a call waiting on the host for its peers gives up. */
    boolean abortRequested() {
        return life.abortRequested();
    }

    /**
     * Tells every peer (abort words set, counters released: blocked streams move on), aborts the primary
     * transport, then frees what no stream uses any more, waiting for busy streams at most the watchdog's
     * timeout (10 s without one); what is still busy then is freed by close() or the watchdog once idle.
     */
    @Override
    public void abort() {
        life.abort();
    }

    /** Waits for this communicator's own enqueued work (unless it failed or was aborted), then frees it. */
    @Override
    public void close() {
        life.close();
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
