package io.flexlink.sync;

import io.flexlink.runtime.PeerOps;

/**
 * Point-to-point transfers over a {@link Channel}, any pattern of pairs (NCCL's grouped send/recv). The
 * transfers from producer {@code p} to consumer {@code q} form one sequence of items, chunk by chunk of
 * each transfer in call order, numbered from 0 in every group; both ends build the same sequence. Work is
 * issued in rounds: round {@code c} sends item {@code c} to peers at distance 1, 2, ... and receives item
 * {@code c} from peers at distance 1, 2, ...; a send of (round, distance) only waits for receives of lower
 * (round, distance), and a receive only for the matching send, so nothing deadlocks, on one stream per rank
 * (the host ring, the caller's stream) or on a send and a receive stream (the staged paths). A transfer to
 * this rank itself is a local copy.
 */
public final class Exchanges {
    private final int rank;
    private final int ranks;
    private final Rows rows = new Rows();
    private int[][] sendOps = new int[0][];
    private int[][] recvOps = new int[0][];
    private int[] sendCount;
    private int[] recvCount;

    public Exchanges(int rank, int ranks) {
        this.rank = rank;
        this.ranks = ranks;
        this.sendOps = new int[ranks][4];
        this.recvOps = new int[ranks][4];
        this.sendCount = new int[ranks];
        this.recvCount = new int[ranks];
    }

    /** Enqueues {@code ops}; sends go to {@code sendLane}, receives and local copies to {@code recvLane} (may be the same). */
    public void run(Channel channel, PeerOps ops, Lane sendLane, Lane recvLane) {
        java.util.Arrays.fill(sendCount, 0);
        java.util.Arrays.fill(recvCount, 0);
        for (int i = 0; i < ops.size(); i++) {
            int q = ops.peer(i);
            if (ops.isSend(i)) {
                sendOps[q] = push(sendOps[q], sendCount[q]++, i);
            } else {
                recvOps[q] = push(recvOps[q], recvCount[q]++, i);
            }
        }
        // to this rank itself: the i-th send pairs with the i-th receive, a copy
        for (int k = 0; k < Math.min(sendCount[rank], recvCount[rank]); k++) {
            int s = sendOps[rank][k];
            int r = recvOps[rank][k];
            recvLane.copy(ops.address(r), ops.address(s), Math.min(ops.bytes(s), ops.bytes(r)));
        }
        long chunk = channel.slotBytes();
        long rounds = 0;
        for (int q = 0; q < ranks; q++) {
            if (q != rank) {
                rounds = Math.max(rounds, Math.max(items(ops, sendOps[q], sendCount[q], chunk),
                        items(ops, recvOps[q], recvCount[q], chunk)));
            }
        }
        for (int c = 0; c < rounds; c++) {
            for (int t = 1; t < ranks; t++) {
                int to = (rank + t) % ranks;
                int from = Math.floorMod(rank - t, ranks);
                long at = locate(ops, sendOps[to], sendCount[to], chunk, c);
                if (at >= 0) {
                    channel.send(sendLane, c, rows.set(ops.address(located) + at, 0, locatedBytes), 1L << to);
                }
                at = locate(ops, recvOps[from], recvCount[from], chunk, c);
                if (at >= 0) {
                    channel.receive(recvLane, c, 1L << from, false, rows.set(ops.address(located) + at, 0, locatedBytes));
                }
            }
        }
    }

    private static int[] push(int[] a, int at, int v) {
        int[] b = at < a.length ? a : java.util.Arrays.copyOf(a, 2 * a.length + 1);
        b[at] = v;
        return b;
    }

    /** Items of a pair's transfers: each transfer's chunks (a transfer of no bytes has none). */
    private static long items(PeerOps ops, int[] list, int n, long chunk) {
        long items = 0;
        for (int k = 0; k < n; k++) {
            items += (ops.bytes(list[k]) + chunk - 1) / chunk;
        }
        return items;
    }

    private int located;
    private long locatedBytes;

    /** Finds item {@code c} of a pair: its transfer ({@link #located}) and offset; -1 past the end. */
    private long locate(PeerOps ops, int[] list, int n, long chunk, long c) {
        for (int k = 0; k < n; k++) {
            long bytes = ops.bytes(list[k]);
            long chunks = (bytes + chunk - 1) / chunk;
            if (c < chunks) {
                located = list[k];
                long at = c * chunk;
                locatedBytes = Math.min(chunk, bytes - at);
                return at;
            }
            c -= chunks;
        }
        return -1;
    }
}
