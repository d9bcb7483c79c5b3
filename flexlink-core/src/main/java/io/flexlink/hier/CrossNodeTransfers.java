package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.launch.Groups;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A hierarchical communicator's Send and Recv between nodes, as its part of the thread's group: the calls
 * are recorded, and the group's end (or at once a call outside a group, a group of one) runs them all on
 * the peer links ({@link PeerNet}) on a lane of this communicator's own, forked from the caller's stream
 * and joined back into it. The lane keeps them beside the same group's transfers inside the node (the node
 * communicator's part of the group), so that neither waits for the other, as NCCL runs a group's transfers
 * at once. On a node of one rank, which has no node communicator, a group's transfers to oneself come here
 * too. The join comes in the group's third phase, after the primary transports' group ends, since NCCL
 * enqueues its part of a group only there. A group's transfers between nodes come from one thread and use
 * one stream, as the single-node communicator's do. Used under the communicator's lock.
 */
final class CrossNodeTransfers implements Groups.Member {
    private final PeerNet net;
    private final int rank;
    private final ReentrantLock lock;
    private final Consumer<RuntimeException> failed;
    private final RuntimeStream lane;
    private final RuntimeEvent forked;
    private final RuntimeEvent joined;
    private final PeerOps ops = new PeerOps();
    private RuntimeStream caller;
    private Groups owner;
    private boolean launched;
    private boolean used;

    CrossNodeTransfers(Backend backend, int device, int rank, PeerNet net, ReentrantLock lock,
                       Consumer<RuntimeException> failed) {
        this.net = net;
        this.rank = rank;
        this.lock = lock;
        this.failed = failed;
        this.lane = backend.createStream(device, "hier.peers.r" + rank);
        this.forked = backend.createEvent(device, false);
        this.joined = backend.createEvent(device, false);
    }

    /**
     * Refuses, before anything is recorded, a transfer this group cannot take: from another thread than its
     * other calls, or on another stream.
     */
    void check(RuntimeStream rs, int rank) {
        if (ops.isEmpty()) {
            return;
        }
        if (owner != Groups.current()) {
            throw new FlexLinkException(Result.INVALID_USAGE, "communicator: rank " + rank + " has transfers in "
                    + "another thread's open group; one communicator's group calls come from one thread");
        }
        if (caller != rs) {
            throw new FlexLinkException(Result.INVALID_USAGE, "stream: the sends and receives between nodes of one "
                    + "group run on one stream; rank " + rank + " used " + caller.label() + " and " + rs.label());
        }
    }

    /** Records one checked transfer ({@code bytes} at {@code address}); launched now outside a group. */
    void add(boolean send, int peer, long address, long bytes, RuntimeStream rs) {
        Groups g = Groups.current();
        boolean first = ops.isEmpty();
        ops.add(send, peer, address, bytes);
        caller = rs;
        if (!g.inGroup()) {
            owner = g;
            Groups.single(this);
            return;
        }
        if (first) {
            owner = g;
            g.join(this);
            if (net.transport() != null) {
                g.enter(net.transport()); // NCCL launches the transfers with the rest of the group
            }
        }
    }

    /**
     * Runs {@code ops}, this rank's whole part of a collective's exchange between nodes (every send and
     * receive at once, so that no pair waits for another), on the lane, forked from {@code caller} and joined
     * back into it: each pair's link then carries its chunks in the lane's order, whichever call made them.
     * Called outside any group (collectives are refused inside one), so no group's transfers are pending.
     */
    void exchangeNow(PeerOps collective, RuntimeStream caller) {
        caller.record(forked);
        lane.waitEvent(forked);
        net.exchange(collective, lane);
        lane.record(joined);
        caller.waitEvent(joined);
        used = true;
    }

    @Override
    public void launchPrimary() {
        lock.lock();
        try {
            if (ops.isEmpty()) {
                return;
            }
            checkTransfersToItself();
            caller.record(forked);
            lane.waitEvent(forked);
            net.exchange(ops, lane);
            launched = true;
        } catch (RuntimeException e) {
            clear();
            failed.accept(e); // the peers wait for this rank's part: ends the communicator everywhere
            throw e;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void launchAuxiliary() {
        lock.lock();
        try {
            if (launched) {
                lane.record(joined);
                caller.waitEvent(joined);
                used = true;
            }
        } finally {
            clear();
            lock.unlock();
        }
    }

    @Override
    public void discard() {
        lock.lock();
        try {
            if (launched) { // another member's launch failed after this one's: the lane still runs its part
                lane.record(joined);
                used = true;
            }
            clear();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public double estimateSeconds() {
        return 0; // not modelled: the network's rate is not known here
    }

    /**
     * NCCL's rule at the group's end for transfers to oneself (on a node of one rank they come here): the
     * {@code k}-th send to this rank and its {@code k}-th receive from it pair up and have one size.
     */
    private void checkTransfersToItself() {
        int k = 0;
        for (int i = 0; i < ops.size(); i++) {
            if (ops.peer(i) == rank && ops.isSend(i)) {
                int j = kthReceiveFromItself(k++);
                if (j < 0 || ops.bytes(j) != ops.bytes(i)) {
                    throw new FlexLinkException(Result.INVALID_USAGE, "peer: rank " + rank + " sends " + ops.bytes(i)
                            + " bytes to itself in this group, " + (j < 0 ? "without a matching receive"
                            : "and its matching receive takes " + ops.bytes(j)));
                }
            }
        }
        if (kthReceiveFromItself(k) >= 0) {
            throw new FlexLinkException(Result.INVALID_USAGE, "peer: rank " + rank + " receives from itself in this "
                    + "group without a matching send");
        }
    }

    private int kthReceiveFromItself(int k) {
        for (int i = 0, seen = 0; i < ops.size(); i++) {
            if (ops.peer(i) == rank && !ops.isSend(i) && seen++ == k) {
                return i;
            }
        }
        return -1;
    }

    private void clear() {
        ops.clear();
        caller = null;
        owner = null;
        launched = false;
    }

    /** Waits until every transfer launched so far has left the lane, giving up when {@code giveUp} says so. */
    void drain(BooleanSupplier giveUp) {
        while (used && !joined.isComplete() && !giveUp.getAsBoolean()) {
            LockSupport.parkNanos(200_000);
        }
    }

    /**
     * {@link #drain}s (an abort releases the lane), then closes the peer links (what is enqueued goes out, then a goodbye) and frees
     * the lane.
     */
    void drainAndClose(BooleanSupplier giveUp) {
        drain(giveUp);
        net.close();
        lane.close();
        forked.close();
        joined.close();
    }
}
