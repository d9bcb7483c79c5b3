package io.flexlink.plan;

import io.flexlink.path.CollectiveCall;

/**
 * One call's plan, a value: the validated call, the share of each auxiliary path, the element range of
 * every path (primary first) and how the call is timed. It is made once per call by the plan stage and
 * read by the launch stages; a communicator reuses its plans (one per call in a group), so that a steady
 * state allocates nothing.
 */
public final class CallPlan {
    /** The call itself. */
    public final CollectiveCall call = new CollectiveCall();
    /** Share of each auxiliary path, as the balancer decided. */
    public final double[] fractions;
    /** Elements of each path: {@code lengths[0]} the primary's {@code [0, lengths[0])}, then each auxiliary path's, in order. */
    public final long[] lengths;
    /** True when an auxiliary path carries elements (the call is forked and joined). */
    public boolean split;
    /** The balancer's token for timing this call, or -1. */
    public int token = -1;
    /** The timer's slot of a timed call, or -1. */
    public int timerSlot = -1;
    /**
     * Enqueued while the caller's stream was being captured into a CUDA graph (valid when {@link #captureKnown};
     * a call below the split size, and every call of a communicator without auxiliary paths, leave it unknown
     * until someone asks: {@code Launcher.captured}).
     */
    public boolean captured;
    /** The stream's capture state was asked for this call (calls below the split size skip the question). */
    public boolean captureKnown;
    /** The auxiliary part goes to the enqueue thread (handed over at launch, joined in the join stage). */
    public boolean async;
    /** Its number among the calls handed to the enqueue thread (what its join waits for), when {@link #async}. */
    public long handedOver;
    /** The input was copied aside first (an in-place AlltoAll); {@code call.send} is the copy. */
    public boolean stagedInput;
    /** A PreMulSum's input was multiplied by its scalar first; {@code call.send} is the product. */
    public boolean preScaled;
    /** The plan's position in its communicator's group (what staged inputs are kept per). */
    public final int index;

    public CallPlan(int auxPaths) {
        this(auxPaths, 0);
    }

    public CallPlan(int auxPaths, int index) {
        this.fractions = new double[auxPaths];
        this.lengths = new long[auxPaths + 1];
        this.index = index;
    }

    /** First element of auxiliary path {@code i}'s range. */
    public long auxOffset(int i) {
        long offset = lengths[0];
        for (int k = 0; k < i; k++) {
            offset += lengths[k + 1];
        }
        return offset;
    }

    /** Forgets what the plan refers to (no caller's stream outlives the call). */
    public void clear() {
        call.stream = null;
        split = false;
        token = -1;
        timerSlot = -1;
        captured = false;
        captureKnown = false;
        stagedInput = false;
        preScaled = false;
        async = false;
    }

    @Override
    public String toString() {
        return call + " lengths " + java.util.Arrays.toString(lengths);
    }
}
