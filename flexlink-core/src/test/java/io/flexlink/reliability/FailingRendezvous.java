package io.flexlink.reliability;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.time.Duration;

/**
 * An in-process rendezvous for {@code initRank} on threads that fails fast: round {@code failRound} of rank
 * {@code failRank} throws (a network failure mid-creation), and a rank that fails or closes its exchange
 * before every rank finished creating fails the ranks still waiting at once, naming it (what a TCP
 * rendezvous reports when a peer leaves), instead of a timeout. {@code onPeerLost} of rank
 * {@code failListenerRank} throws, the last step of creation. It counts the rounds of a creation.
 */
final class FailingRendezvous {
    private static final Duration BOUND = Duration.ofSeconds(30);

    private final int size;
    private final int failRank;
    private final int failRound;
    private final int failListenerRank;
    private byte[][] current;
    private byte[][] previous;
    private int arrived;
    private long generation;
    private String broken;
    private final int[] rounds;

    /** No failure injected by the exchange itself. */
    FailingRendezvous(int size) {
        this(size, -1, -1, -1);
    }

    FailingRendezvous(int size, int failRank, int failRound, int failListenerRank) {
        this.size = size;
        this.failRank = failRank;
        this.failRound = failRound;
        this.failListenerRank = failListenerRank;
        this.current = new byte[size][];
        this.rounds = new int[size];
    }

    /** Rounds rank 0 took part in so far. */
    synchronized int rounds() {
        return rounds[0];
    }

    /** Rank {@code rank}'s exchange. */
    RankExchange exchange(int rank) {
        return new RankExchange() {
            @Override
            public byte[][] allGather(byte[] mine) {
                return FailingRendezvous.this.allGather(rank, mine);
            }

            @Override
            public void onPeerLost(PeerLossListener listener) {
                if (rank == failListenerRank) {
                    throw new FlexLinkException(Result.SYSTEM_ERROR, "injected: onPeerLost of rank " + rank);
                }
            }

            @Override
            public void close() {
                leave(rank);
            }
        };
    }

    private synchronized void leave(int rank) {
        if (broken == null) {
            broken = "rank " + rank + " closed its exchange";
            notifyAll();
        }
    }

    private synchronized byte[][] allGather(int rank, byte[] mine) {
        if (broken != null) {
            throw new FlexLinkException(Result.REMOTE_ERROR, "rendezvous: " + broken);
        }
        rounds[rank]++;
        if (rank == failRank && rounds[rank] == failRound) {
            broken = "rank " + rank + " failed in round " + failRound;
            notifyAll();
            throw new FlexLinkException(Result.SYSTEM_ERROR, "injected: round " + failRound + " of rank " + rank);
        }
        long gen = generation;
        current[rank] = mine.clone();
        if (++arrived == size) {
            previous = current;
            current = new byte[size][];
            arrived = 0;
            generation++;
            notifyAll();
            return previous;
        }
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (generation == gen) {
            long left = deadline - System.nanoTime();
            if (broken != null || left <= 0) {
                throw new FlexLinkException(Result.REMOTE_ERROR, "rendezvous: "
                        + (broken != null ? broken : "timed out"));
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FlexLinkException(Result.SYSTEM_ERROR, "rendezvous interrupted");
            }
        }
        return previous;
    }
}
