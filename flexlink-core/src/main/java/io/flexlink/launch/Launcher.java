package io.flexlink.launch;

import io.flexlink.balance.CallTimer;
import io.flexlink.balance.PathCounters;
import io.flexlink.balance.Shares;
import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.plan.CallPlan;
import io.flexlink.plan.SplitPlanner;
import io.flexlink.Collective;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One communicator's stages of a call after validation: plan (the balancer's {@code decide}, then the
 * split), launch the primary path on the caller's stream, launch the auxiliary paths forked off it, join
 * them back. The primary collective goes first: the auxiliary paths enqueue many operations (host time
 * that would delay the primary launch), and they only wait for the fork, so they still start together
 * with it. Nothing here waits for the device. Used under the communicator's lock.
 */
public final class Launcher implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Launcher.class);

    private final int ranks;
    private final Path primary;
    private final Path[] aux;
    private final Shares shares;
    private final SplitPlanner planner;
    private final PathCounters counters;
    /** Null when calls are never timed. */
    private final CallTimer timer;
    private final RuntimeEvent fork;
    /**
     * The fork of a group's sends and receives: their stream may differ from a collective's of the same group, whose
     * fork is recorded after theirs, so one event for both would fork the transfers' path work off the wrong stream.
     */
    private final RuntimeEvent exchangeFork;
    private final RuntimeEvent[][] joins;
    /** The plan whose auxiliary part is being enqueued on this thread, for {@link #joinsOfPlan}. */
    private CallPlan joining;
    /** Its join events: the timer's for a timed call, else {@link #joins} (made once: nothing per call). */
    private final AuxiliaryLaunch.Joins joinsOfPlan = (i, k) -> join(joining, i, k);
    /**
     * An in-place AlltoAll's input, copied aside first (every rank's block is read after its own arrives), one
     * per group position.
     */
    private final GroupScratch inPlaceInputs;
    private final PreScaledInputs preScaled;
    private final PeerOps exchange = new PeerOps();
    /** Null when the auxiliary paths are enqueued on the caller's thread. */
    private final EnqueueWorker worker;
    /** Null unless {@code flexlink.groupGate} is on (and there is an auxiliary path to hold). */
    private final GroupGate gate;
    private boolean warnedCapture;

    /**
     * @param enqueueThread whether the auxiliary paths get an enqueue thread ({@link EnqueueWorker})
     * @param groupGate     whether a group's split calls hold their auxiliary work until the group is enqueued
     */
    public Launcher(Backend backend, int device, int rank, int ranks, Path primary, Path[] aux, Shares shares,
                    long minSplitBytes, PathCounters counters, CallTimer timer, boolean enqueueThread,
                    boolean groupGate) {
        this.ranks = ranks;
        this.primary = primary;
        this.aux = aux;
        this.shares = shares;
        // with no auxiliary path no call splits: its split size is beyond any call's
        this.planner = new SplitPlanner(primary != null, aux.length == 0 ? Long.MAX_VALUE : minSplitBytes, ranks);
        this.counters = counters;
        this.timer = timer;
        this.fork = backend.createEvent(device, false);
        this.exchangeFork = backend.createEvent(device, false);
        this.worker = enqueueThread && aux.length > 0 ? new EnqueueWorker(backend, device, rank, aux, counters) : null;
        this.gate = groupGate && aux.length > 0 ? new GroupGate(backend) : null;
        this.inPlaceInputs = new GroupScratch(backend, device);
        this.preScaled = new PreScaledInputs(backend, device, ranks);
        this.joins = new RuntimeEvent[aux.length][];
        for (int i = 0; i < aux.length; i++) {
            RuntimeStream[] s = aux[i].streams();
            joins[i] = new RuntimeEvent[s.length];
            for (int k = 0; k < s.length; k++) {
                joins[i][k] = backend.createEvent(device, false);
            }
        }
    }

    /**
     * The plan stage: the shares (counted by the balancer, or its current choice for a call captured into a
     * graph, whose shares are fixed at capture), then the element range of every path.
     */
    public void plan(CallPlan p) {
        CollectiveCall c = p.call;
        long bytes = c.bytes(ranks);
        if (planner.primaryOnly(bytes)) {
            // never split, never timed: neither the balancer nor the stream's capture state is asked (a small
            // call's host time is the raw primary's plus this); whoever needs the capture state asks it later
            planWhole(p);
            return;
        }
        p.captured = c.stream.isCapturing();
        p.captureKnown = true;
        c.uncaptured = !p.captured;
        if (p.captured) {
            shares.current(c.collective, bytes, p.fractions);
            p.token = -1;
            for (int i = 0; i < aux.length; i++) {
                if (p.fractions[i] > 0 && !aux[i].capturable()) {
                    p.fractions[i] = 0;
                    if (!warnedCapture) {
                        warnedCapture = true;
                        LOG.info("COLL {} cannot be captured into a CUDA graph: its share of captured calls goes to "
                                + "the other paths", aux[i].name());
                    }
                }
            }
        } else {
            p.token = shares.decide(c.collective, bytes, p.fractions);
        }
        planner.plan(p);
    }

    /** The whole call on the primary path (a group with several calls of one communicator). */
    public void planWhole(CallPlan p) {
        java.util.Arrays.fill(p.lengths, 0);
        p.lengths[0] = p.call.count;
        p.split = false;
        p.token = -1;
    }

    /**
     * Phase 1: the fork (when split), the timing start, the primary range on the caller's stream (its end is timed in
     * phase 3, {@link #launchAuxiliary}); {@code grouped}:
     * the call is this communicator's part of the group this thread is ending (which may hold it).
     */
    public void launchPrimary(CallPlan p, boolean grouped) {
        CollectiveCall c = p.call;
        if (c.collective == Collective.ALL_TO_ALL && c.send == c.recv) {
            stageInPlaceInput(p);
        }
        if (c.preMulSum) {
            preScaled.stage(p); // before the fork: every path sums the products
        }
        // timed whenever the balancer asks, split or not: its probe of the primary path alone is a measurement too
        p.timerSlot = timer != null && p.token >= 0 ? timer.begin(p.token, c.stream) : -1;
        if (p.split && gate != null && grouped && !p.captured && Groups.current().holding()) {
            // a replay of a graph has no group end to let it go: only eager calls are held
            c.gate = gate.word();
            c.gateValue = gate.hold();
        }
        if (p.split) {
            // timed and captured calls keep their auxiliary part on this thread: their events are this thread's
            p.async = worker != null && !p.captured && p.timerSlot < 0 && worker.hasRoom();
            if (p.async) {
                c.stream.record(worker.nextFork());
                worker.submit(p); // the thread enqueues the auxiliary part while this one launches the primary
            } else {
                drain();
                c.stream.record(fork);
            }
        }
        long n = p.lengths[0];
        if (n > 0) {
            primary.enqueue(c, 0, n);
            counters.add(0, n * c.type.size());
        }
    }

    /**
     * Phase 3: the primary range's end for a timed call, then every auxiliary path's range, forked off the caller's
     * stream and joined back into it (a call handed to the enqueue thread in phase 1 is only joined).
     */
    public void launchAuxiliary(CallPlan p) {
        if (p.timerSlot >= 0 && p.lengths[0] > 0) {
            // only now: inside a group the primary transport launches at the group's end, after phase 1, so a record
            // there would come before the primary's work and time it as nothing; before the joins, which would add the
            // auxiliary paths' time
            timer.primaryDone(p.timerSlot, p.call.stream);
        }
        if (!p.split) {
            return;
        }
        if (p.async) {
            p.async = false; // joined: nothing left for a discard to join
            worker.join(p, p.call.stream);
            return;
        }
        CollectiveCall c = p.call;
        joining = p;
        AuxiliaryLaunch.enqueue(aux, counters, p, fork, joinsOfPlan);
        joining = null;
        for (int i = 0; i < aux.length; i++) {
            if (p.lengths[i + 1] > 0) {
                for (int k = 0; k < aux[i].streams().length; k++) {
                    c.stream.waitEvent(join(p, i, k));
                }
            }
        }
    }

    /**
     * A call of a group discarded before its third phase ended (a step failed): a part already handed to the enqueue
     * thread will run, so its caller's stream is joined to it anyway, and a staged input (whose primary part may
     * have been launched) is marked read, so that neither the stream's later work nor the next fill overtakes what
     * it reads; a timed call records no sample. Nothing else of a discarded call was enqueued past its fork.
     */
    public void discard(CallPlan p) {
        if (p.timerSlot >= 0) {
            timer.cancel(p.timerSlot);
            p.timerSlot = -1;
        }
        if (p.async && p.call.stream != null && worker != null && worker.running()) {
            p.async = false;
            worker.join(p, p.call.stream);
        }
        if ((p.stagedInput || p.preScaled) && p.call.stream != null) {
            done(p); // what was launched (the primary's part, a handed-over part) reads the staged input
        }
    }

    /** Reads an in-place AlltoAll's whole input aside, so that no rank's block is overwritten before it is sent. */
    private void stageInPlaceInput(CallPlan p) {
        CollectiveCall c = p.call;
        long bytes = c.bytes(ranks);
        long copy = inPlaceInputs.at(p.index).fill(bytes, c.stream, captured(p));
        c.stream.copy(copy, c.send, bytes);
        c.send = copy;
        p.stagedInput = true;
    }

    /** After every path's work of {@code p} is on (or joined into) the caller's stream. */
    public void done(CallPlan p) {
        preScaled.done(p);
        if (p.stagedInput) {
            inPlaceInputs.at(p.index).read(p.call.stream, captured(p));
        }
    }

    /** Whether {@code p}'s stream is being captured: as the plan found it, or asked now (once) if it did not ask. */
    public static boolean captured(CallPlan p) {
        if (!p.captureKnown) {
            p.captured = p.call.stream.isCapturing();
            p.captureKnown = true;
        }
        return p.captured;
    }

    // ---- a group's sends and receives: every path carries a range of each, all of a path's at once ----

    /** The split of a send or receive: the shares AlltoAll has now for its size (never counted: only pairs call). */
    public void planTransfer(CallPlan p) {
        if (aux.length == 0) {
            planWhole(p); // as plan: the capture state is asked later by whoever needs it
            return;
        }
        CollectiveCall c = p.call;
        shares.current(Collective.ALL_TO_ALL, c.bytes(ranks), p.fractions);
        p.token = -1;
        p.captured = c.stream.isCapturing();
        p.captureKnown = true; // c.uncaptured is not set: an exchange batches no runs (StagedAlgorithms.exchange)
        if (p.captured) {
            for (int i = 0; i < aux.length; i++) {
                if (!aux[i].capturable()) {
                    p.fractions[i] = 0;
                }
            }
        }
        planner.plan(p);
    }

    /** Phase 1 for the group's transfers: the fork, and the primary path's ranges of all of them together. */
    public void launchPrimaryExchange(GroupedCalls g, RuntimeStream stream) {
        boolean split = false;
        for (int k = 0; k < g.size(); k++) {
            CallPlan p = g.get(k);
            if (p.call.collective.pointToPoint()) {
                counters.add(0, p.lengths[0] * p.call.type.size());
                split |= p.split;
            }
        }
        if (split) {
            drain(); // the exchange runs on this thread
            stream.record(exchangeFork); // before the primary's work: the auxiliary paths wait for the inputs only
        }
        if (collect(g, -1) && primary != null) {
            primary.exchange(exchange, stream);
        }
    }

    /** Phase 3 for the group's transfers: each auxiliary path's ranges of all of them, forked and joined. */
    public void launchAuxiliaryExchange(GroupedCalls g, RuntimeStream stream) {
        for (int i = 0; i < aux.length; i++) {
            if (!collect(g, i)) {
                continue;
            }
            RuntimeStream[] ps = aux[i].streams();
            for (RuntimeStream s : ps) {
                s.waitEvent(exchangeFork);
            }
            aux[i].exchange(exchange, stream);
            for (int k = 0; k < ps.length; k++) {
                ps[k].record(joins[i][k]);
                stream.waitEvent(joins[i][k]);
            }
            for (int k = 0; k < g.size(); k++) {
                CallPlan p = g.get(k);
                if (p.call.collective.pointToPoint()) {
                    counters.add(i + 1, p.lengths[i + 1] * p.call.type.size());
                }
            }
        }
    }

    /** The ranges of path {@code i} (-1: the primary) of the group's transfers into {@link #exchange}; true if any bytes. */
    private boolean collect(GroupedCalls g, int i) {
        exchange.clear();
        boolean any = false;
        for (int k = 0; k < g.size(); k++) {
            CallPlan p = g.get(k);
            CollectiveCall c = p.call;
            if (!c.collective.pointToPoint()) {
                continue;
            }
            long offset = i < 0 ? 0 : p.auxOffset(i);
            long n = p.lengths[i + 1];
            int sz = c.type.size();
            boolean send = c.collective == Collective.SEND;
            exchange.add(send, c.root, (send ? c.send : c.recv) + offset * sz, n * sz);
            any |= n > 0;
        }
        return any;
    }

    /** Waits until the enqueue thread has enqueued everything handed to it (before this thread uses the paths). */
    public void drain() {
        if (worker != null) {
            worker.drain();
        }
    }

    /** Before close() waits for the paths' streams: held calls go (a group may not have ended), the thread drains. */
    public void drainForClose() {
        releaseHeld();
        drain();
    }

    /**
     * Stops the enqueue thread (an abort): a caller waiting to join its calls gives up; and lets held calls go,
     * before the teardown waits for the streams.
     */
    public void stopAndRelease() {
        releaseHeld();
        if (worker != null) {
            worker.stop();
        }
    }

    /** The enqueue thread's failure, or null. */
    public io.flexlink.FlexLinkException workerFailure() {
        return worker == null ? null : worker.failure();
    }

    private RuntimeEvent join(CallPlan p, int i, int k) {
        return p.timerSlot >= 0 ? timer.auxDone(p.timerSlot, i, k) : joins[i][k];
    }

    /** After the group's end: the held calls may run (a host write; no call lock: a closed gate writes nothing). */
    public void releaseHeld() {
        if (gate != null) {
            gate.open();
        }
    }

    @Override
    public void close() {
        if (worker != null) {
            worker.close();
        }
        if (gate != null) {
            gate.open(); // nothing may stay held past the communicator
            if (worker == null || worker.stopped()) {
                gate.close(); // else a late wait of the thread's might still read it: it stays allocated
            }
        }
        fork.close();
        exchangeFork.close();
        inPlaceInputs.close();
        preScaled.close();
        for (RuntimeEvent[] es : joins) {
            for (RuntimeEvent e : es) {
                e.close();
            }
        }
    }
}
