package io.flexlink.hier;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The counts of a multi-node {@code allToAllv}, agreed by every rank before anything is enqueued. The
 * stages of the exchange run on ranks that are neither the sender nor the receiver of a piece (the node's
 * rank that forwards a block over its rail), and those ranks must enqueue copies and transfers of the
 * piece's size, which only its sender and receiver were given. So every rank hands its send and receive
 * counts (or the reason its arguments were refused) to every other through the job's exchange, one round
 * on the host per call, and every rank then checks the same matrix: a refused argument anywhere, or a send
 * count that its receiver does not expect, fails the call on every rank alike instead of hanging some.
 */
final class CountAgreement {
    private static final byte OK = 0;
    private static final byte REFUSED = 1;

    private CountAgreement() {
    }

    /**
     * Returns {@code counts[i][j]}, the elements rank {@code i} sends to rank {@code j}. {@code checks} are
     * this rank's own argument checks; what they throw is thrown here after the round, so that the other
     * ranks hear of it.
     */
    static long[][] agree(RankExchange exchange, int rank, int n, long[] sendCounts, long[] recvCounts,
                          Runnable checks) {
        FlexLinkException refused = null;
        try {
            checks.run();
        } catch (FlexLinkException e) {
            refused = e;
        }
        byte[] mine;
        if (refused != null) {
            byte[] why = refused.getMessage().getBytes(StandardCharsets.UTF_8);
            mine = ByteBuffer.allocate(1 + why.length).put(REFUSED).put(why).array();
        } else {
            ByteBuffer b = ByteBuffer.allocate(1 + 16 * n).put(OK);
            for (int j = 0; j < n; j++) {
                b.putLong(sendCounts[j]);
            }
            for (int j = 0; j < n; j++) {
                b.putLong(recvCounts[j]);
            }
            mine = b.array();
        }
        byte[][] all = exchange.allGather(mine);
        if (refused != null) {
            throw refused;
        }
        long[][] sent = new long[n][n];
        long[][] expected = new long[n][n];
        for (int i = 0; i < n; i++) {
            ByteBuffer b = ByteBuffer.wrap(all[i]);
            if (b.get() == REFUSED) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "allToAllv: rank " + i + "'s arguments were "
                        + "refused (" + new String(all[i], 1, all[i].length - 1, StandardCharsets.UTF_8) + "); "
                        + "every rank's call was cancelled");
            }
            for (int j = 0; j < n; j++) {
                sent[i][j] = b.getLong();
            }
            for (int j = 0; j < n; j++) {
                expected[i][j] = b.getLong();
            }
        }
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (sent[i][j] != expected[j][i]) {
                    String whose = j == rank ? "recvcounts[" + i + "]" : i == rank ? "sendcounts[" + j + "]"
                            : "sendcounts/recvcounts";
                    throw new FlexLinkException(Result.INVALID_ARGUMENT, whose + ": rank " + i + " sends " + sent[i][j]
                            + " elements to rank " + j + ", which expects " + expected[j][i] + " from it; every "
                            + "rank's call was cancelled");
                }
            }
        }
        return sent;
    }

    /** The largest count of the matrix: the block of the padded exchange (0: nothing moves). */
    static long max(long[][] counts) {
        long max = 0;
        for (long[] row : counts) {
            for (long v : row) {
                max = Math.max(max, v);
            }
        }
        return max;
    }
}
