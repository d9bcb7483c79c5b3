package io.flexlink.bench;

import io.flexlink.DataType;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeStream;

/**
 * What every {@link CallTarget} shares: how one row of {@link PerfCollective} becomes calls on local
 * ranks {@code from..to-1}. A target supplies two things, {@link #collective} (one call of a FlexLink
 * collective on one rank) and {@link #exchange} (one rank's sends and receives of one group); this class
 * makes nccl-tests' calls of them:
 *
 * <ul>
 *   <li>a collective: each rank's call, the ranks of one thread in one group (as nccl-tests does when a
 *       thread drives several GPUs);</li>
 *   <li>sendrecv (sendrecv.cu): each rank sends its buffer to rank + 1 and receives rank - 1's, in one
 *       group with the thread's other ranks;</li>
 *   <li>hypercube (hypercube.cu): each rank first copies its own block into place on its stream (not in
 *       place), then for {@code mask = 1, 2, 4, ...} sends the {@code mask} blocks from block
 *       {@code rank & ~(mask - 1)} to rank {@code rank ^ mask} and receives as many into the partner's
 *       blocks. Each round is one group of the thread's ranks, after the round before it, whose data it
 *       sends on. (nccl-tests nests every round in the group around a thread's GPUs when -g is above 1,
 *       which lets a round's transfers run before the data they send arrived; with -m above 1 both nest
 *       every call of an iteration in one group, which only the timing sees: checked calls run alone.)</li>
 * </ul>
 */
abstract class RankCalls implements CallTarget {
    /** Per local rank (threads enqueue for their own ranks at once), reused. */
    private final PeerOps[] ops;

    RankCalls(int localRanks) {
        ops = new PeerOps[localRanks];
        for (int r = 0; r < localRanks; r++) {
            ops[r] = new PeerOps();
        }
    }

    /** One call of {@code c.collective.collective()} on local rank {@code r}. */
    abstract void collective(int r, CallSpec c, long send, long recv, RuntimeStream s);

    /**
     * Local rank {@code r}'s transfers of one group ({@code ops}, in bytes, a multiple of the type's size),
     * as one group of its own (nested in the caller's, if any).
     */
    abstract void exchange(int r, PeerOps ops, DataType type, RuntimeStream s);

    @Override
    public final void enqueue(CallSpec c, int from, int to, int iter) {
        if (c.collective == PerfCollective.HYPERCUBE) {
            hypercube(c, from, to, iter);
            return;
        }
        boolean group = to - from > 1;
        if (group) {
            groupStart();
        }
        try {
            for (int r = from; r < to; r++) {
                long send = c.ws.send(r, iter);
                long recv = c.ws.recv(r, iter);
                if (c.collective == PerfCollective.SENDRECV) {
                    int n = c.ws.commSize();
                    int g = c.ws.commRank(r);
                    long bytes = c.shape.count * c.shape.typeSize;
                    PeerOps p = ops[r];
                    p.clear();
                    p.add(true, (g + 1) % n, send, bytes);
                    p.add(false, (g - 1 + n) % n, recv, bytes);
                    exchange(r, p, c.type, c.ws.stream(r));
                } else {
                    collective(r, c, send, recv, c.ws.stream(r));
                }
            }
        } finally {
            if (group) {
                groupEnd();
            }
        }
    }

    private void hypercube(CallSpec c, int from, int to, int iter) {
        int n = c.ws.commSize();
        long block = c.shape.count * c.shape.typeSize;
        for (int r = from; r < to; r++) {
            long own = c.ws.recv(r, iter) + c.ws.commRank(r) * block;
            long send = c.ws.send(r, iter);
            if (own != send && block > 0) {
                c.ws.stream(r).copy(own, send, block);
            }
        }
        boolean group = to - from > 1;
        for (int mask = 1; mask < n; mask <<= 1) {
            if (group) {
                groupStart();
            }
            try {
                for (int r = from; r < to; r++) {
                    int g = c.ws.commRank(r);
                    long recv = c.ws.recv(r, iter);
                    int mine = g & ~(mask - 1);
                    int theirs = mine ^ mask;
                    PeerOps p = ops[r];
                    p.clear();
                    p.add(true, g ^ mask, recv + mine * block, block * mask);
                    p.add(false, g ^ mask, recv + theirs * block, block * mask);
                    exchange(r, p, c.type, c.ws.stream(r));
                }
            } finally {
                if (group) {
                    groupEnd();
                }
            }
        }
    }
}
