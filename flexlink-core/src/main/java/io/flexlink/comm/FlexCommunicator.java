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
    private final GroupJoins deferred;
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
        this.pendingLengths = new long[aux.length + 1];
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
        this.deferred = new GroupJoins(joins, this::joinDeferred);
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
    void run(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
             Stream userStream) {
        lock.lock();
        try {
            life.checkUsable();
            Validator.checkCall(c, send, recv, count, type, op, root, rank, size);
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
        call.set(c, send, recv, count, type, op, root, stream);
        shares.shares(c, call.bytes(size), fractions);
        boolean split = planner.plan(call, size, fractions, lengths);
        Groups group = Groups.current();
        if (group.inGroup() && primary != null) {
            group.enter(transport);
        }
        // the balancer's calls are timed; in a group only the first call of this communicator (the primary
        // launch, and so its end, is deferred to the group's end)
        int ch = timer == null || (group.inGroup() && !deferred.isEmpty()) ? -1 : balancer.timedChannel();
        int slot = ch < 0 ? -1 : timer.begin(ch, balancer.version(ch), stream);
        if (!split) {
            primary.enqueue(call, 0, count);
            counters.add(0, lengths[0] * type.size());
            if (slot >= 0) {
                if (group.inGroup()) {
                    deferred.pendingSlot = slot;
                    deferred.defer(group, stream, lengths);
                } else {
                    timer.primaryDone(slot, stream);
                }
            }
            finish(c, count, stream, group);
            return;
        }
        stream.record(fork);
        // NCCL first: the auxiliary paths enqueue many small operations (host time that would delay the
        // primary launch); they only wait for the fork, so they still start together with it
        if (lengths[0] > 0) {
            primary.enqueue(call, 0, lengths[0]);
            counters.add(0, lengths[0] * type.size());
            if (slot >= 0 && !group.inGroup()) {
                timer.primaryDone(slot, stream);
            }
        }
        if (group.inGroup()) {
            if (slot >= 0 && lengths[0] > 0) {
                deferred.pendingSlot = slot;
            }
            if (deferred.isEmpty()) {
                // inside a group NCCL launches at the group's end: enqueue the auxiliary paths after that
                pendingCall.set(c, send, recv, count, type, op, root, stream);
                System.arraycopy(lengths, 0, pendingLengths, 0, lengths.length);
                pendingAuxSlot = slot;
                auxPending = true;
            } else {
                enqueueAux(call, lengths, slot, true);
            }
            deferred.defer(group, stream, lengths);
            finish(c, count, stream, group);
            return;
        }
        enqueueAux(call, lengths, slot, false);
        for (int i = 0; i < aux.length; i++) {
            if (lengths[i + 1] > 0) {
                RuntimeStream[] ps = aux[i].streams();
                for (int k = 0; k < ps.length; k++) {
                    stream.waitEvent(slot >= 0 ? timer.auxDone(slot, i, k) : joins[i][k]);
                }
            }
        }
        finish(c, count, stream, group);
    }

    /** Enqueues every auxiliary path's range of {@code c}; they wait for the fork recorded on the caller's stream. */
    private void enqueueAux(CollectiveCall c, long[] len, int slot, boolean inGroup) {
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
                if (slot >= 0) {
                    ps[k].record(timer.auxDone(slot, i, k));
                }
                if (slot < 0 || inGroup) {
                    ps[k].record(joins[i][k]); // a deferred join waits on these
                }
            }
            offset += n;
            counters.add(i + 1, n * c.type.size());
        }
    }

    /** After a call's work: its stream is watched for failures, and the watchdog's done event is recorded. */
    private void finish(Collective c, long count, RuntimeStream stream, Groups group) {
        health.used(stream);
        if (watch == null) {
            return;
        }
        if (group.inGroup()) {
            deferred.collective = c;
            deferred.count = count;
            deferred.defer(group, stream, null); // the done record waits for the group's launch
        } else {
            watch.record(stream, c, count, life.now());
        }
    }

    /** The first split call of the current group, whose auxiliary paths are enqueued at the group's end. */
    private final CollectiveCall pendingCall = new CollectiveCall();
    private long[] pendingLengths;
    private int pendingAuxSlot = -1;
    private boolean auxPending;

    private void joinDeferred() {
        lock.lock();
        try {
            if (auxPending) {
                auxPending = false;
                if (!life.teardown.done()) {
                    enqueueAux(pendingCall, pendingLengths, pendingAuxSlot, true);
                }
            }
            if (!life.teardown.done()) {
                deferred.join(timer, watch, watch == null ? 0 : life.now());
            }
        } finally {
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
