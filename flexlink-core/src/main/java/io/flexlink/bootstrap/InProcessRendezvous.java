package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Rendezvous of ranks that live in this process (threads), found by the token of their unique id. Each
 * all-gather is a generation: it completes when every rank has contributed, and fails after the
 * timeout naming the ranks that never arrived.
 */
public final class InProcessRendezvous {
    private static final Map<String, InProcessRendezvous> OPEN = new ConcurrentHashMap<>();

    private final String token;
    private final int size;
    private final Duration timeout;
    private byte[][] current;
    private byte[][] previous;
    private int arrived;
    private long generation;
    private int departed;

    private InProcessRendezvous(String token, int size, Duration timeout) {
        this.token = token;
        this.size = size;
        this.timeout = timeout;
        this.current = new byte[size][];
    }

    /** Joins (or opens) the rendezvous for {@code token}; every rank must pass the same size. */
    public static RankExchange join(String token, int size, int rank, Duration timeout) {
        InProcessRendezvous r = OPEN.computeIfAbsent(token, t -> new InProcessRendezvous(t, size, timeout));
        if (r.size != size) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT,
                    "nranks: rank " + rank + " says " + size + " ranks, another rank said " + r.size);
        }
        return mine -> r.allGather(rank, mine);
    }

    /** Marks {@code rank} as done with the rendezvous; the last one removes it. */
    public static void leave(String token) {
        InProcessRendezvous r = OPEN.get(token);
        if (r != null) {
            synchronized (r) {
                if (++r.departed == r.size) {
                    OPEN.remove(token);
                }
            }
        }
    }

    private synchronized byte[][] allGather(int rank, byte[] mine) {
        long gen = generation;
        if (current[rank] != null) {
            throw new FlexLinkException(Result.INVALID_USAGE, "rank: " + rank + " joined the same communicator twice");
        }
        current[rank] = mine.clone();
        arrived++;
        if (arrived == size) {
            previous = current;
            current = new byte[size][];
            arrived = 0;
            generation++;
            notifyAll();
            return previous;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (generation == gen) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                List<Integer> missing = new ArrayList<>();
                for (int i = 0; i < size; i++) {
                    if (current[i] == null) {
                        missing.add(i);
                    }
                }
                current[rank] = null;
                arrived--;
                throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation timed out after "
                        + timeout.toMillis() + " ms waiting for ranks " + missing + " of " + size);
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FlexLinkException(Result.SYSTEM_ERROR, "communicator creation interrupted");
            }
        }
        return previous;
    }

    @Override
    public String toString() {
        return "InProcessRendezvous[" + token + ", " + size + " ranks]";
    }
}
