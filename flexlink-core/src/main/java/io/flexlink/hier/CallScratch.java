package io.flexlink.hier;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a hierarchical communicator's calls share, and when it may be freed: the scratch, the zeros, the
 * stage timer and the pipelined AllReduce's events. Calls on different streams are ordered through the
 * event of the last one (the scratch is shared), and everything is freed only once the last call left its
 * stream. Used under the communicator's call lock, apart from {@link #freeWhenDrained}.
 */
final class CallScratch {
    private static final Logger LOG = LoggerFactory.getLogger(CallScratch.class);

    final StageTimer timer;
    final Scratch scratch;
    final Zeros zeros;
    /** Null on nodes of one rank (nothing to overlap with the rail). */
    final PipelinedAllReduce piped;
    /** Recorded after each call on its stream: a call on another stream waits for it; close drains it. */
    private final RuntimeEvent lastDone;
    /** Held while freeing (which may wait for the streams), apart from the communicator's monitor. */
    private final Object freeLock = new Object();
    private RuntimeStream lastStream;
    private volatile boolean freed;

    CallScratch(Backend backend, int device, HierRank h) {
        this.timer = new StageTimer(backend, device);
        this.scratch = new Scratch(backend, device);
        this.zeros = new Zeros(backend, device);
        this.piped = h.intra == null ? null : new PipelinedAllReduce(backend, device, h, timer, zeros);
        this.lastDone = backend.createEvent(device, false);
    }

    /** A call on another stream than the last one waits for it: the scratch is shared. */
    void order(RuntimeStream rs) {
        if (lastStream != null && lastStream != rs) {
            rs.waitEvent(lastDone);
        }
    }

    /** After a call's work on {@code rs}. */
    void done(RuntimeStream rs) {
        timer.end();
        rs.record(lastDone);
        lastStream = rs;
    }

    boolean freed() {
        return freed;
    }

    /** Under the call lock: waits until the last call left its stream, giving up when {@code giveUp} says so. */
    void drainLastCall(BooleanSupplier giveUp) {
        while (lastStream != null && !lastDone.isComplete() && !giveUp.getAsBoolean()) {
            LockSupport.parkNanos(200_000);
        }
    }

    /** The stages' totals, or none once freed. */
    List<io.flexlink.CommStats.PathTotals> stageTotals() {
        return freed ? List.of() : timer.totals();
    }

    /** Frees everything once the last call left its stream (at most {@code nanos}); else leaves it, saying so. */
    void freeWhenDrained(long nanos, String who) {
        synchronized (freeLock) {
            if (freed) {
                return;
            }
            long deadline = System.nanoTime() + nanos;
            while (lastStream != null && !lastDone.isComplete() && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(200_000);
            }
            if (lastStream != null && !lastDone.isComplete()) {
                LOG.warn("INIT {}: a stream is still inside a call; its scratch stays allocated", who);
                return;
            }
            freed = true;
            if (piped != null) {
                piped.close();
            }
            scratch.close();
            zeros.close();
            timer.close();
            lastDone.close();
        }
    }
}
