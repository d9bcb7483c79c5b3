package io.flexlink.hier;

import io.flexlink.Collective;
import io.flexlink.CommStats;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.PreMulSum;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.comm.CommSplitter;
import io.flexlink.comm.ParentCommunicator;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.OneSided;
import io.flexlink.runtime.RankExchange;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.validate.AllToAllvArgs;
import io.flexlink.validate.Validator;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A communicator whose ranks span several nodes: FlexLink's split paths inside each node (a communicator
 * over the node's ranks), rails across nodes (the ranks of one local index, one per node: NCCL on CUDA,
 * a TCP ring on the host backend), composed stage by stage on the caller's stream
 * ({@link HierCollectives}). Paths never cross a node; every rank of every node holds the same bits.
 *
 * <p>Errors follow the single-node communicator's model: the first asynchronous error (of the node's
 * communicator, of a rail, or a rank lost anywhere) sticks, later calls throw it, and finding it aborts
 * everything and tells every rank — the node's ranks through their communicator, the other nodes through
 * the rail connections and the job's rendezvous, which stays open for that. Collectives inside
 * {@code groupStart}/{@code groupEnd} are refused: a group would defer the node-local stages past the
 * rail stage that reads their results; Send and Recv join the group, inside a node and between nodes.
 */
public final class HierarchicalCommunicator extends ParentCommunicator {
    private static final Logger LOG = LoggerFactory.getLogger(HierarchicalCommunicator.class);
    private static final long DRAIN_NANOS = 10_000_000_000L;

    private final Backend backend;
    private final HierRank h;
    private final RankExchange parent;
    /** Splits over the job's exchange: a child may span several nodes (hierarchical) or one (single-node). */
    private final CallScratch shared;
    private final StageTimer timer;
    private final HierCollectives collectives;
    private final HierExchanges exchanges;
    /** Send and Recv between nodes; null where the job has no peer links ({@link Rails#peers}). */
    private final CrossNodeTransfers cross;
    private final AllToAllvArgs allToAllvArgs = new AllToAllvArgs();
    private final ReentrantLock lock = new ReentrantLock();
    private volatile boolean closed;
    private volatile boolean aborted;
    private final HierEnds ends = new HierEnds();
    private volatile FlexLinkException error;
    private boolean released;

    HierarchicalCommunicator(Backend backend, HierRank h, int device, RankExchange parent, CommSplitter splitter) {
        super(h.rank, h.size, device, splitter, backend);
        this.backend = backend;
        this.h = h;
        this.parent = parent;
        this.shared = new CallScratch(backend, device, h);
        this.timer = shared.timer;
        this.collectives = new HierCollectives(h, shared.scratch, shared.zeros, timer, shared.piped);
        this.cross = h.peers == null ? null : new CrossNodeTransfers(backend, device, h.rank, h.peers, lock,
                e -> failed("a transfer between nodes", e));
        this.exchanges = new HierExchanges(h, collectives, shared.scratch, timer, cross);
    }

    private String who() {
        return "rank " + h.rank + "/" + h.size + " (node " + h.node + " of " + h.nodes + ")";
    }

    // ---- the collectives ----

    /**
     * AlltoAllv as a padded AlltoAll ({@link HierExchanges#allToAllv}). Every rank's counts reach every
     * rank first ({@link CountAgreement}, one round of the job's exchange on the host), because ranks that
     * are neither a piece's sender nor its receiver move it; so the call returns once every rank made it,
     * and a rank's refused arguments fail the call on every rank, before anything is enqueued anywhere.
     */
    @Override
    public void allToAllv(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                          long[] recvDispls, DataType type, Stream stream) {
        lock.lock();
        try {
            checkUsable();
            long[][] counts = CountAgreement.agree(parent, h.rank, h.size, sendCounts, recvCounts,
                    () -> HierExchanges.checkAllToAllv(who(), allToAllvArgs, backend, device, h.size, send, sendCounts,
                            sendDispls, recv, recvCounts, recvDispls, type, stream));
            RuntimeStream rs = Validator.checkStream(backend, stream, device);
            long max = CountAgreement.max(counts);
            if (max == 0) {
                return;
            }
            shared.order(rs);
            try {
                timer.begin(rs);
                exchanges.allToAllv(send, sendDispls, recv, recvDispls, counts, max, type, stream, rs);
                shared.done(rs);
            } catch (RuntimeException | Error e) {
                throw failed("allToAllv", e);
            }
        } catch (FlexLinkException e) {
            Groups.current().fail(e);
            throw e;
        } finally {
            lock.unlock();
        }
    }

    @Override
    protected void checkNotClosed() {
        checkUsable();
    }

    /** With the node's communicator and the rail, which both move the caller's buffers ({@link HierRegistration}). */
    @Override
    protected AutoCloseable registerBelow(long address, long bytes) {
        return oneSided((b, none, whyNone) -> {
            Validator.checkRegistration(b, address, bytes, device);
            return HierRegistration.register(h, address, bytes, rail -> underLock(lock, rail));
        });
    }

    /** Under the call lock, with no NCCL windows: the node's communicator and the rails are NCCL communicators each. */
    @Override
    protected <T> T oneSided(OneSided.Call<T> call) {
        lock.lock();
        try {
            checkUsable();
            return call.run(backend, null, "a multi-node communicator: its node's communicator and its rails are "
                    + "separate NCCL communicators");
        } finally {
            lock.unlock();
        }
    }

    @Override
    protected void checkSplittable() {
        checkUsable();
    }

    /** Refused: stopping a multi-node communicator's work ends the job's rendezvous ({@link #release}). */
    @Override
    protected void stopBeforeShrink() {
        throw new FlexLinkException(Result.INVALID_USAGE, who() + ": shrink with abortFirst on a multi-node "
                + "communicator: stopping its work ends the job's rendezvous that a shrink needs");
    }

    /** Waits for this rank's work as close() does, then finalizes the node's communicator; only close() is left. */
    @Override
    public void finalizeComm() {
        ends.begin(HierEnds.FINALIZED, closed, this::checkUsable, who());
        lock.lock();
        try {
            shared.drainLastCall(() -> released || getAsyncError() != Result.SUCCESS);
            if (cross != null) { // the transfers between nodes too
                cross.drain(() -> released || getAsyncError() != Result.SUCCESS);
            }
            Result r = getAsyncError();
            if (r != Result.SUCCESS) {
                String why = error == null ? "aborted" : error.getMessage();
                throw new FlexLinkException(r, who() + ": finalizeComm: " + why);
            }
            if (h.intra != null) {
                h.intra.finalizeComm();
            }
            shared.freeWhenDrained(DRAIN_NANOS, who());
        } finally {
            lock.unlock();
        }
    }

    /** Stops the work as abort() does (which ends the job's rendezvous: no split or shrink can follow here). */
    @Override
    public void revoke() {
        ends.begin(HierEnds.REVOKED, closed, null, who());
        release("rank " + h.rank + " revoked the communicator");
        shared.freeWhenDrained(DRAIN_NANOS, who());
    }

    private void checkUsable() {
        if (closed) {
            throw new FlexLinkException(Result.INVALID_USAGE, who() + ": the communicator is closed");
        }
        ends.check(who());
        FlexLinkException e = error;
        if (e != null) {
            throw new FlexLinkException(e.result(), who() + ": " + e.getMessage(), e);
        }
        if (aborted) {
            throw new FlexLinkException(Result.INVALID_USAGE, who() + ": the communicator was aborted");
        }
    }

    /**
     * Validates everything, then enqueues every stage; a stage that fails after another was enqueued aborts.
     * Inside a group only Send and Recv are taken: within the node recorded into the node communicator's part
     * of the group, between nodes into this communicator's ({@link CrossNodeTransfers}); both launch at its
     * end. A refused call cancels the group, as NCCL's are atomic.
     */
    @Override
    protected void run(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
                     Stream stream) {
        enqueue(c, send, recv, count, type, op, null, root, stream);
    }

    /**
     * PreMulSum as the single-node communicator runs it: this rank's whole input multiplied by the scalar into
     * scratch on the caller's stream ({@link CallScratch#preScale}), then the hierarchy's SUM of the products, so
     * every element is still reduced once, in one order (inside the node, then across nodes) on every rank.
     */
    @Override
    protected void runPreMulSum(Collective c, long send, long recv, long count, DataType type, PreMulSum op, int root,
                                Stream stream) {
        enqueue(c, send, recv, count, type, ReduceOp.SUM, op, root, stream);
    }

    private void enqueue(Collective c, long send, long recv, long count, DataType type, ReduceOp op, PreMulSum preMul,
                         int root, Stream stream) {
        lock.lock();
        try {
            checkUsable();
            if (preMul != null) {
                checkPreMulSum(preMul, type);
            }
            Validator.checkCall(c, send, recv, count, type, op, root, h.rank, h.size);
            Validator.checkMemory(backend, c, send, recv, count, type, root, h.rank, h.size, device);
            RuntimeStream rs = Validator.checkStream(backend, stream, device);
            boolean grouped = Groups.active();
            exchanges.refuseGrouped(c);
            if (count == 0) {
                return;
            }
            if (c.pointToPoint()) {
                exchanges.checkPeer(c, root, grouped);
                if (exchanges.onLane(root)) {
                    exchanges.checkCrossNode(root);
                    cross.check(rs, h.rank);
                    cross.add(c == Collective.SEND, root, c == Collective.SEND ? send : recv, count * type.size(), rs);
                    return;
                }
                if (grouped) {
                    // the node communicator launches it at the group's end; no stage of this one touches it
                    exchanges.transfer(c, send, recv, count, type, root, stream);
                    return;
                }
            }
            shared.order(rs);
            try {
                timer.begin(rs);
                long input = preMul == null ? send : shared.preScale(rs, send,
                        c == Collective.REDUCE_SCATTER ? count * h.size : count, type, preMulSumBits(preMul),
                        preMulSumAddress(preMul));
                exchanges.stages(c, input, recv, count, type, op, root, stream, rs);
                shared.done(rs);
            } catch (RuntimeException | Error e) {
                throw failed(c.displayName(), e);
            }
        } catch (FlexLinkException e) {
            Groups.current().fail(e);
            throw e;
        } finally {
            lock.unlock();
        }
    }

    /** Part of the call is enqueued and the peers wait for the rest: ends it everywhere. */
    private FlexLinkException failed(String name, Throwable e) {
        FlexLinkException f = e instanceof FlexLinkException fe ? fe
                : new FlexLinkException(Result.INTERNAL_ERROR, who() + ": " + name + " failed: " + e, e);
        fail(f);
        return f;
    }

    // ---- errors ----

    @Override
    public Result getAsyncError() {
        Result revoked = ends.revokedResult(shared.freed());
        if (revoked != null) {
            return revoked;
        }
        FlexLinkException e = error;
        if (e != null) {
            return e.result();
        }
        if (aborted) {
            return Result.REMOTE_ERROR;
        }
        e = h.belowError();
        if (e != null) {
            fail(e);
            return error.result();
        }
        return Result.SUCCESS;
    }

    /** A rank of the job is gone (the rendezvous saw its connection close): ends this communicator. */
    void peerLost(int lost, String why) {
        LOG.error("{}: rank {} is gone ({}); aborting the communicator", who(), lost, why);
        fail(new FlexLinkException(Result.REMOTE_ERROR, "rank " + lost + " is gone: " + why));
    }

    /** A rail or peer link broke (a node's process died, or it sent what nobody expected). */
    void railFailed() {
        FlexLinkException e = h.rail.asyncError();
        e = e == null && h.peers != null ? h.peers.asyncError() : e;
        fail(e != null ? e : new FlexLinkException(Result.REMOTE_ERROR, "the rail failed"));
    }

    /** The first error sticks; aborts everything, which tells every rank. */
    void fail(FlexLinkException e) {
        synchronized (this) {
            if (error == null) {
                error = e;
            }
        }
        release(e.getMessage());
    }

    @Override
    public void abort() {
        aborted = true;
        release("rank " + h.rank + " aborted the communicator");
        shared.freeWhenDrained(DRAIN_NANOS, who());
        closeRegistrations(); // after the rail's and the node communicator's aborts, which freed NCCL's
    }

    /** Aborts the rail and the node's communicator, and tells the job (once). */
    private void release(String why) {
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
        }
        // the rail first: a stream blocked on it holds up the node communicator's streams, whose abort waits
        // for them to be idle; then the job, so that every rank hears of it at once
        h.rail.abort();
        if (h.peers != null) {
            h.peers.abort();
        }
        parent.fail(new FlexLinkException(Result.REMOTE_ERROR, who() + ": " + why));
        if (h.intra != null) {
            h.intra.abort();
        }
    }

    // ---- teardown ----

    /** Waits for this communicator's own work (giving up when an error ends it), then frees everything. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        lock.lock();
        try {
            shared.drainLastCall(() -> released || getAsyncError() != Result.SUCCESS);
            if (cross != null) { // its lane's transfers, then the peer links
                cross.drainAndClose(() -> released || getAsyncError() != Result.SUCCESS);
            }
            if (h.intra != null) {
                h.intra.close();
            }
            h.rail.close();
            shared.freeWhenDrained(DRAIN_NANOS, who());
            if (!released) {
                parent.close(); // a goodbye: no rank reports this one lost
            }
        } finally {
            lock.unlock();
        }
        closeRegistrations(); // the node's communicator and the rail closed theirs already
    }

    @Override
    public CommStats stats() {
        lock.lock();
        try {
            Result r = getAsyncError();
            FlexLinkException e = error;
            return HierStats.of(h, shared, closed, r, e == null ? (aborted ? "aborted" : null) : e.getMessage());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "HierarchicalCommunicator[" + who() + ", " + h.layout.describe() + ", rail " + h.rail.describe() + "]";
    }
}
