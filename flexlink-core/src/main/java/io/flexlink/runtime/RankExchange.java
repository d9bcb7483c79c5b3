package io.flexlink.runtime;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * All-gather of small byte arrays among the ranks of a communicator that is being created. An exchange
 * between processes (the TCP rendezvous) also stays open for the communicator's life, to notice a peer
 * process that vanishes: the communicator built over it owns it and closes it.
 */
@FunctionalInterface
public interface RankExchange extends AutoCloseable {
    /** Returns every rank's {@code mine}, indexed by rank; all ranks call it the same number of times. */
    byte[][] allGather(byte[] mine);

    /**
     * One round in which every rank sends {@code mine} (what must be alike on every rank) and checks that all
     * sent the same as rank 0: else INVALID_USAGE naming the first rank that differs, both texts and {@code rule}.
     */
    default void requireAlike(String mine, String rule) {
        byte[][] all = allGather(mine.getBytes(StandardCharsets.UTF_8));
        for (int r = 0; r < all.length; r++) {
            if (!Arrays.equals(all[r], all[0])) {
                throw new FlexLinkException(Result.INVALID_USAGE, "configuration: rank " + r
                        + " has " + new String(all[r], StandardCharsets.UTF_8) + " but rank 0 has "
                        + new String(all[0], StandardCharsets.UTF_8) + "; " + rule);
            }
        }
    }

    /**
     * True when the ranks live in different processes: memory shared between them must then be mappable
     * by other processes ({@link Backend#createShared(long, String, boolean)}).
     */
    default boolean crossProcess() {
        return false;
    }

    /**
     * Registers {@code listener} to hear of a rank whose process is gone (its connection closed without
     * a goodbye); called at once for a rank already lost. Called on an internal thread; must not block.
     * In-process exchanges never lose a rank, and ignore listeners.
     */
    default void onPeerLost(PeerLossListener listener) {
    }

    /** Says goodbye to the peers and releases the connections; idempotent. */
    @Override
    default void close() {
    }

    /**
     * Ends the exchange because this rank's creation failed; peers are told why: their pending and
     * later rounds fail promptly with REMOTE_ERROR naming this rank and {@code cause} (its result code
     * and message), instead of timing out. Releases the exchange like {@link #close()}; idempotent, and
     * does nothing after {@code close}.
     */
    default void fail(Throwable cause) {
        close();
    }

    /** Hears that the process of rank {@code rank} is gone. */
    @FunctionalInterface
    interface PeerLossListener {
        void peerLost(int rank, String reason);
    }
}
