package io.flexlink.hier;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.comm.CommunicatorFactory;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
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
    /** A PreMulSum's products ({@link #preScale}) and its host scalar's word, written in stream order. */
    private final Scratch preScaled;
    private final PinnedMemory scalar;
    /** Held while freeing (which may wait for the streams), apart from the communicator's monitor. */
    private final Object freeLock = new Object();
    private RuntimeStream lastStream;
    private volatile boolean freed;

    CallScratch(Backend backend, int device, HierRank h) {
        // the node's balancer hears each timed call's rail time (its model of the call: node stages + rail)
        Communicator node = h.intra;
        this.timer = new StageTimer(backend, device, node == null ? StageTimer.Outside.NONE
                : (c, count, type, seconds) -> CommunicatorFactory.outsideTime(node, c, count, type, seconds));
        this.scratch = new Scratch(backend, device);
        this.zeros = new Zeros(backend, device);
        this.piped = h.intra == null ? null : new PipelinedAllReduce(backend, device, h, timer, zeros);
        this.lastDone = backend.createEvent(device, false);
        this.preScaled = new Scratch(backend, device);
        this.scalar = backend.allocatePinned(8);
    }

    /**
     * PreMulSum's first step, as the single-node launcher's ({@code launch.PreScaledInputs}): on {@code rs},
     * multiplies {@code elements} of {@code send} by the scalar (a device address, or 0 and the host scalar's
     * {@code bits}, which the stream writes into this communicator's word right before, as NCCL passes it in its
     * kernel's arguments) into scratch of its own, whose address it returns; the call then sums that. Calls are
     * ordered by {@link #order}, so one word and one scratch serve them all.
     */
    long preScale(RuntimeStream rs, long send, long elements, DataType type, long bits, long address) {
        long dst = preScaled.ensure(Math.max(1, elements * type.size()));
        long at = address;
        if (at == 0) {
            rs.writeValue32(scalar, 0, (int) bits); // little-endian: the element's low bytes first
            if (type.size() == 8) {
                rs.writeValue32(scalar, 4, (int) (bits >>> 32));
            }
            at = scalar.deviceAddress();
        }
        rs.scale(dst, send, elements, type, at, 0);
        return dst;
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
            preScaled.close();
            scalar.close();
            zeros.close();
            timer.close();
            lastDone.close();
        }
    }
}
