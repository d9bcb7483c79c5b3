package io.flexlink.path;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.RuntimeStream;

/**
 * One rank's view of one collective call, after validation. A communicator reuses a single instance,
 * so that a steady-state call allocates nothing. Counts are elements; for AllGather {@code count} is the
 * per-rank send count and for ReduceScatter the per-rank receive count, so that every collective is
 * split over the same range {@code [0, count)}. For Send and Recv {@code root} is the peer.
 */
public final class CollectiveCall {
    public Collective collective;
    public long send;
    public long recv;
    public long count;
    public DataType type;
    public ReduceOp op;
    public int root;
    public RuntimeStream stream;
    /**
     * True for a PreMulSum (then {@link #op} is SUM): until the launcher stages the input, {@link #send} is
     * the caller's input, to be multiplied by the scalar at {@link #scalarAddress} (a device scalar) or by
     * {@link #scalarBits} (a host scalar, when the address is 0). The paths only ever see the scaled input.
     */
    public boolean preMulSum;
    public long scalarAddress;
    public long scalarBits;
    /**
     * True once the launcher asked the caller's stream and it was not being captured into a graph: the paths may
     * then enqueue what has no graph node (CUDA's batched copies). False until asked, and for a captured call.
     */
    public boolean uncaptured;
    /**
     * Where the auxiliary paths' streams wait before this call's work ({@code flexlink.groupGate}): until the
     * counter at offset 0 of {@code gate} reaches {@link #gateValue}; null when the call is not held.
     */
    public io.flexlink.runtime.PinnedMemory gate;
    public int gateValue;

    public CollectiveCall set(Collective collective, long send, long recv, long count, DataType type, ReduceOp op,
                              int root, RuntimeStream stream) {
        this.collective = collective;
        this.send = send;
        this.recv = recv;
        this.count = count;
        this.type = type;
        this.op = op;
        this.root = root;
        this.stream = stream;
        this.preMulSum = false;
        this.uncaptured = false;
        this.gate = null;
        return this;
    }

    /** Makes the call a PreMulSum (after {@link #set} with SUM): see {@link #preMulSum}. */
    public CollectiveCall preMulSum(long scalarAddress, long scalarBits) {
        this.preMulSum = true;
        this.scalarAddress = scalarAddress;
        this.scalarBits = scalarBits;
        return this;
    }

    /** Bytes of one rank's buffer that the call moves: count times element size (times ranks for gathers). */
    public long bytes(int ranks) {
        long b = count * type.size();
        return collective.blocked() ? b * ranks : b;
    }

    @Override
    public String toString() {
        return collective + "(count=" + count + ", " + type + (collective.reduces() ? ", " + (preMulSum ? "PREMULSUM" : op) : "")
                + (collective.pointToPoint() ? ", peer=" + root : collective.rooted() ? ", root=" + root : "") + ")";
    }
}
