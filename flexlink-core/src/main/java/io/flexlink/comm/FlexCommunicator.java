package io.flexlink.comm;

import io.flexlink.Buffer;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine behind {@link Communicator}: validate → plan (shares) → split (aligned ranges) → fork the
 * auxiliary paths off the caller's stream → enqueue each path's range → join them back. The primary path
 * works on the caller's stream itself, so a call that stays on it costs what the primary collective costs.
 * Nothing here waits for the device.
 */
public final class FlexCommunicator implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(FlexCommunicator.class);

    private final Backend backend;
    private final PrimaryTransport transport;
    private final int rank;
    private final int size;
    private final int device;
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
    private final AutoCloseable resources;
    private volatile boolean closed;
    private volatile boolean aborted;

    FlexCommunicator(Backend backend, PrimaryTransport transport, int rank, int size, int device, Path primary,
                     List<Path> auxPaths, ShareProvider shares, long minSplitBytes, AutoCloseable resources) {
        this.backend = backend;
        this.transport = transport;
        this.rank = rank;
        this.size = size;
        this.device = device;
        this.primary = primary;
        this.aux = auxPaths.toArray(new Path[0]);
        this.shares = shares;
        this.planner = new SplitPlanner(primary != null, minSplitBytes);
        this.fractions = new double[aux.length];
        this.lengths = new long[aux.length + 1];
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
        this.resources = resources;
        this.balancer = shares instanceof Balancer ? (Balancer) shares : null;
        this.timer = balancer != null ? new CallTimer(backend, device, aux, balancer, counters) : null;
        LOG.debug("INIT rank {}/{} device {} paths {}", rank, size, device, names);
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int device() {
        return device;
    }

    /** The paths in use, primary first (absent when off). */
    public List<String> pathNames() {
        return counters.names();
    }

    // ---- the collectives ----

    @Override
    public void allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Stream stream) {
        Validator.checkBuffers(Collective.ALL_REDUCE, send, recv, count, type, 0, rank, size, device);
        allReduce(Validator.address(send), Validator.address(recv), count, type, op, stream);
    }

    @Override
    public void allReduce(long send, long recv, long count, DataType type, ReduceOp op, Stream stream) {
        run(Collective.ALL_REDUCE, send, recv, count, type, op, 0, stream);
    }

    @Override
    public void allGather(Buffer send, Buffer recv, long sendCount, DataType type, Stream stream) {
        Validator.checkBuffers(Collective.ALL_GATHER, send, recv, sendCount, type, 0, rank, size, device);
        allGather(Validator.address(send), Validator.address(recv), sendCount, type, stream);
    }

    @Override
    public void allGather(long send, long recv, long sendCount, DataType type, Stream stream) {
        run(Collective.ALL_GATHER, send, recv, sendCount, type, ReduceOp.SUM, 0, stream);
    }

    @Override
    public void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op, Stream stream) {
        Validator.checkBuffers(Collective.REDUCE_SCATTER, send, recv, recvCount, type, 0, rank, size, device);
        reduceScatter(Validator.address(send), Validator.address(recv), recvCount, type, op, stream);
    }

    @Override
    public void reduceScatter(long send, long recv, long recvCount, DataType type, ReduceOp op, Stream stream) {
        run(Collective.REDUCE_SCATTER, send, recv, recvCount, type, op, 0, stream);
    }

    @Override
    public void broadcast(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream) {
        Validator.checkBuffers(Collective.BROADCAST, send, recv, count, type, root, rank, size, device);
        broadcast(Validator.address(send), Validator.address(recv), count, type, root, stream);
    }

    @Override
    public void broadcast(long send, long recv, long count, DataType type, int root, Stream stream) {
        run(Collective.BROADCAST, send, recv, count, type, ReduceOp.SUM, root, stream);
    }

    @Override
    public void reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root, Stream stream) {
        Validator.checkBuffers(Collective.REDUCE, send, recv, count, type, root, rank, size, device);
        reduce(Validator.address(send), Validator.address(recv), count, type, op, root, stream);
    }

    @Override
    public void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, Stream stream) {
        run(Collective.REDUCE, send, recv, count, type, op, root, stream);
    }

    private synchronized void run(Collective c, long send, long recv, long count, DataType type, ReduceOp op,
                                  int root, Stream userStream) {
        if (closed || aborted) {
            throw new FlexLinkException(Result.INVALID_USAGE,
                    "communicator: rank " + rank + " was " + (aborted ? "aborted" : "closed"));
        }
        Validator.checkCall(c, send, recv, count, type, op, root, rank, size);
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
        int ch = timer == null || (group.inGroup() && !pendingStreams.isEmpty()) ? -1 : balancer.timedChannel();
        int slot = ch < 0 ? -1 : timer.begin(ch, balancer.version(ch), stream);
        if (!split) {
            primary.enqueue(call, 0, count);
            counters.add(0, lengths[0] * type.size());
            if (slot >= 0) {
                if (group.inGroup()) {
                    pendingSlot = slot;
                    deferJoin(group, stream);
                } else {
                    timer.primaryDone(slot, stream);
                }
            }
            return;
        }
        stream.record(fork);
        long offset = lengths[0];
        for (int i = 0; i < aux.length; i++) {
            long len = lengths[i + 1];
            if (len == 0) {
                continue;
            }
            RuntimeStream[] ps = aux[i].streams();
            for (RuntimeStream s : ps) {
                s.waitEvent(fork);
            }
            aux[i].enqueue(call, offset, len);
            for (int k = 0; k < ps.length; k++) {
                if (slot >= 0) {
                    ps[k].record(timer.auxDone(slot, i, k));
                }
                if (slot < 0 || group.inGroup()) {
                    ps[k].record(joins[i][k]); // a deferred join waits on these
                }
            }
            offset += len;
            counters.add(i + 1, len * type.size());
        }
        if (lengths[0] > 0) {
            primary.enqueue(call, 0, lengths[0]);
            counters.add(0, lengths[0] * type.size());
            if (slot >= 0 && !group.inGroup()) {
                timer.primaryDone(slot, stream);
            }
        }
        if (group.inGroup()) {
            if (slot >= 0 && lengths[0] > 0) {
                pendingSlot = slot;
            }
            deferJoin(group, stream);
            return;
        }
        for (int i = 0; i < aux.length; i++) {
            if (lengths[i + 1] > 0) {
                RuntimeStream[] ps = aux[i].streams();
                for (int k = 0; k < ps.length; k++) {
                    stream.waitEvent(slot >= 0 ? timer.auxDone(slot, i, k) : joins[i][k]);
                }
            }
        }
    }

    private void join(int path, RuntimeStream stream) {
        for (RuntimeEvent e : joins[path]) {
            stream.waitEvent(e);
        }
    }

    // inside a group: which paths to join, into which caller streams, once the group ends
    private boolean[] pendingPaths;
    private final List<RuntimeStream> pendingStreams = new ArrayList<>();
    /** The timed call of the current group whose primary end is recorded once the group launched it. */
    private int pendingSlot = -1;
    private final Runnable joinDeferredTask = this::joinDeferred;

    private void deferJoin(Groups group, RuntimeStream stream) {
        if (pendingPaths == null) {
            pendingPaths = new boolean[aux.length];
        }
        if (pendingStreams.isEmpty()) {
            group.defer(joinDeferredTask);
        }
        for (int i = 0; i < aux.length; i++) {
            pendingPaths[i] |= lengths[i + 1] > 0;
        }
        if (!pendingStreams.contains(stream)) {
            pendingStreams.add(stream);
        }
    }

    private synchronized void joinDeferred() {
        if (pendingSlot >= 0) {
            timer.primaryDone(pendingSlot, pendingStreams.get(0));
            pendingSlot = -1;
        }
        for (RuntimeStream s : pendingStreams) {
            for (int i = 0; i < aux.length; i++) {
                if (pendingPaths[i]) {
                    join(i, s);
                }
            }
        }
        pendingStreams.clear();
        java.util.Arrays.fill(pendingPaths, false);
    }

    // ---- state ----

    @Override
    public Result getAsyncError() {
        for (Path p : aux) {
            for (RuntimeStream s : p.streams()) {
                FlexLinkException f = s.failure();
                if (f != null) {
                    return f.result();
                }
            }
        }
        return aborted ? Result.REMOTE_ERROR : Result.SUCCESS;
    }

    @Override
    public CommStats stats() {
        if (timer != null) {
            synchronized (this) {
                timer.poll();
            }
        }
        return new CommStats(counters.totals(),
                balancer == null ? new LinkedHashMap<>() : balancer.shareTable(),
                balancer == null ? new ArrayList<>() : balancer.history(),
                balancer == null ? new LinkedHashMap<>() : balancer.stageTable());
    }

    /** The primary path's communicator (NCCL on CUDA), or null when the primary path is off. */
    public io.flexlink.runtime.PrimaryComm primaryComm() {
        return primary instanceof io.flexlink.path.PrimaryPath ? ((io.flexlink.path.PrimaryPath) primary).comm() : null;
    }

    /** The balancer, or null when shares are fixed. */
    public Balancer balancer() {
        return balancer;
    }

    @Override
    public void abort() {
        if (aborted) {
            return;
        }
        aborted = true;
        LOG.warn("INIT rank {}/{}: communicator aborted", rank, size);
        for (Path p : aux) {
            p.abort();
        }
        if (primary != null) {
            primary.abort();
        }
        release();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        synchronized (this) {
            closed = true;
        }
        if (!aborted) {
            for (Path p : aux) {
                for (RuntimeStream s : p.streams()) {
                    try {
                        s.synchronize();
                    } catch (FlexLinkException e) {
                        LOG.debug("INIT rank {}: {} failed before close: {}", rank, p.name(), e.getMessage());
                    }
                }
            }
        }
        release();
    }

    private boolean released;

    private synchronized void release() {
        if (released) {
            return;
        }
        released = true;
        for (Path p : aux) {
            p.close();
        }
        if (primary != null) {
            primary.close();
        }
        fork.close();
        if (timer != null) {
            timer.close();
        }
        if (resources != null) {
            try {
                resources.close();
            } catch (Exception e) {
                LOG.debug("INIT rank {}: releasing balancer resources: {}", rank, e.toString());
            }
        }
        for (RuntimeEvent[] es : joins) {
            for (RuntimeEvent e : es) {
                e.close();
            }
        }
    }

    @Override
    public String toString() {
        return "Communicator[rank " + rank + "/" + size + ", device " + device + ", " + backend.name() + "]";
    }
}
