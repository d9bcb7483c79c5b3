package io.flexlink.reliability;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.Stream;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;

/**
 * One fuzzed call on rank {@code rank} of a 3-rank communicator, with its buffers laid out in that rank's
 * pool (two regions of {@link #REGION} bytes), and {@link #valid()}: NCCL's rules for the call, stated
 * independently of the library's validator.
 */
final class FuzzCall {
    enum Target { LIVE, CLOSED, ABORTED }

    enum Layout { OUT_OF_PLACE, IN_PLACE, SAME, OVERLAP, NULL_SEND, NULL_RECV }

    enum StreamKind { OWN, NULL, OTHER_DEVICE, FOREIGN }

    static final int N = ApiFuzzTest.N;
    static final long REGION = 128 << 10;
    static final long POOL = 2 * REGION;
    /** Counts up to this fit the pools for every type and collective (3000 * 8 bytes * 3 ranks < REGION). */
    static final long SAFE_COUNT = 3000;

    final Target target;
    final Collective collective;
    final DataType type;
    final ReduceOp op;
    final long count;
    final int root;
    final int rank;
    final Layout layout;
    final boolean buffers;
    final StreamKind streamKind;
    final long send;
    final long recv;
    final long sendBytes;
    final long recvBytes;
    final int sendDevice;
    private final long pool;

    FuzzCall(Target target, Collective collective, DataType type, ReduceOp op, long count, int root, int rank,
             Layout layout, boolean buffers, int sizeDelta, boolean wrongDevice, StreamKind streamKind, long pool) {
        this.target = target;
        this.collective = collective;
        this.type = type;
        this.op = op;
        this.count = count;
        this.root = root;
        this.rank = rank;
        this.layout = layout;
        this.streamKind = streamKind;
        this.pool = pool;
        // through an address, a count that does not fit is the caller's memory error (NCCL's too)
        this.buffers = buffers || count > SAFE_COUNT;
        int sz = type == null ? 1 : type.size();
        long own = count > 0 && count <= SAFE_COUNT ? rank * count * sz : 0; // this rank's block offset
        long a = pool;
        long b = pool + REGION;
        switch (layout) {
            case IN_PLACE:
                send = collective == Collective.ALL_GATHER || collective == Collective.GATHER ? a + own : a;
                recv = collective == Collective.REDUCE_SCATTER || collective == Collective.SCATTER ? a + own : a;
                break;
            case SAME: // in place for AllReduce, Broadcast, Reduce; for AllGather and ReduceScatter at rank 0 only
                send = a;
                recv = a;
                break;
            case OVERLAP:
                send = a;
                recv = a + sz;
                break;
            case NULL_SEND:
                send = 0;
                recv = b;
                break;
            case NULL_RECV:
                send = a;
                recv = 0;
                break;
            default:
                send = a;
                recv = b;
        }
        long elements = Math.max(0, count);
        long sendNeeds = sat(elements, sz, io.flexlink.verify.Expected.inputCount(collective, 1, N));
        long recvNeeds = sat(elements, sz, io.flexlink.verify.Expected.outputCount(collective, 1, N));
        this.sendBytes = Math.min(sendNeeds + (long) sizeDelta * sz, avail(send));
        this.recvBytes = Math.min(recvNeeds + (long) sizeDelta * sz, avail(recv));
        this.sendDevice = wrongDevice ? (rank + 1) % N : rank;
    }

    /** a * b * c, or Long.MAX_VALUE when it overflows. */
    private static long sat(long a, long b, long c) {
        try {
            return Math.multiplyExact(Math.multiplyExact(a, b), c);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    private long avail(long address) {
        return address == 0 ? Long.MAX_VALUE : pool + POOL - address;
    }

    private boolean rooted() {
        return collective.rooted();
    }

    /** NCCL's rules: what a correct library accepts (and must then execute correctly). */
    boolean valid() {
        if (target != Target.LIVE || streamKind != StreamKind.OWN || type == null || count < 0) {
            return false;
        }
        if (collective.reduces() && op == null) {
            return false;
        }
        if (rooted() && (root < 0 || root >= N)) {
            return false;
        }
        int sz = type.size();
        long perRank = count * sz;
        if (sat(count, sz, N) == Long.MAX_VALUE) {
            return false; // the byte count overflows 64 bits
        }
        long total = perRank * N;
        boolean needSend = io.flexlink.verify.Expected.reads(collective, rank, root);
        boolean needRecv = io.flexlink.verify.Expected.writes(collective, rank, root);
        long sendNeeds = io.flexlink.verify.Expected.inputCount(collective, count, N) * sz;
        long recvNeeds = io.flexlink.verify.Expected.outputCount(collective, count, N) * sz;
        if (buffers && ((needSend && !fits(send, sendBytes, sendNeeds, sendDevice))
                || (needRecv && !fits(recv, recvBytes, recvNeeds, rank)))) {
            return false;
        }
        if (count == 0) {
            return true;
        }
        if ((needSend && send == 0) || (needRecv && recv == 0)) {
            return false;
        }
        if (needSend && needRecv) {
            // in place is one position only: the rank's own block for AllGather and ReduceScatter
            switch (collective) {
                case ALL_GATHER:
                case GATHER:
                    return !overlaps(send, perRank, recv, total) || send == recv + rank * perRank;
                case REDUCE_SCATTER:
                case SCATTER:
                    return !overlaps(recv, perRank, send, total) || recv == send + rank * perRank;
                case ALL_TO_ALL:
                    return !overlaps(send, total, recv, total) || send == recv;
                default:
                    return !overlaps(send, perRank, recv, perRank) || send == recv;
            }
        }
        return true;
    }

    private boolean fits(long address, long bytes, long needs, int device) {
        if (address == 0) {
            return count == 0;
        }
        return bytes >= needs && device == rank;
    }

    private static boolean overlaps(long a, long aBytes, long b, long bBytes) {
        return a < b + bBytes && b < a + aBytes;
    }

    /** Makes the call on {@code comm} through the buffer or the address overload. */
    void invoke(Communicator comm, Stream stream) {
        if (!buffers) {
            CollectiveHarness.enqueue(collective, comm, send, recv, count, type, op, root, (RuntimeStream) stream);
            return;
        }
        Buffer s = send == 0 ? null : Buffer.wrap(send, sendBytes, sendDevice);
        Buffer r = recv == 0 ? null : Buffer.wrap(recv, recvBytes, rank);
        switch (collective) {
            case ALL_REDUCE: comm.allReduce(s, r, count, type, op, stream); break;
            case ALL_GATHER: comm.allGather(s, r, count, type, stream); break;
            case REDUCE_SCATTER: comm.reduceScatter(s, r, count, type, op, stream); break;
            case BROADCAST: comm.broadcast(s, r, count, type, root, stream); break;
            case ALL_TO_ALL: comm.allToAll(s, r, count, type, stream); break;
            case GATHER: comm.gather(s, r, count, type, root, stream); break;
            case SCATTER: comm.scatter(s, r, count, type, root, stream); break;
            default: comm.reduce(s, r, count, type, op, root, stream);
        }
    }

    @Override
    public String toString() {
        return collective + " on " + target + " rank " + rank + ": count " + count + ", " + type + ", " + op
                + ", root " + root + ", " + layout + " (send +" + (send == 0 ? "null" : send - pool) + ", recv +"
                + (recv == 0 ? "null" : recv - pool) + "), " + (buffers ? "buffers of " + sendBytes + "/" + recvBytes
                + " B, send on device " + sendDevice : "addresses") + ", stream " + streamKind;
    }
}
