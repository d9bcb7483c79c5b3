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
 * timeout naming the ranks that never arrived. A rank whose creation fails ({@link RankExchange#fail})
 * ends the rendezvous: the ranks waiting in a round, and every later round, fail at once with its error.
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
    /** Why the rendezvous ended (a rank's creation failed), or null. */
    private String failure;

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
            FlexLinkException e = new FlexLinkException(Result.INVALID_ARGUMENT,
                    "nranks: rank " + rank + " says " + size + " ranks, another rank said " + r.size);
            r.fail(rank, e); // the ranks already waiting learn it at once instead of timing out
            leave(token);
            throw e;
        }
        return new RankExchange() {
            @Override
            public byte[][] allGather(byte[] mine) {
                return r.allGather(rank, mine);
            }

            @Override
            public void fail(Throwable cause) {
                r.fail(rank, cause);
            }

            @Override
            public String toString() {
                return r + "[rank " + rank + "]";
            }
        };
    }

    private synchronized void fail(int rank, Throwable cause) {
        if (failure == null) {
            failure = "rank " + rank + "'s communicator creation failed: " + Wire.describe(cause);
            notifyAll();
        }
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
        failIfEnded(rank, gen);
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
            if (failure != null) {
                current[rank] = null;
                arrived--;
                failIfEnded(rank, gen);
            }
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

    private void failIfEnded(int rank, long gen) {
        if (failure != null) {
            throw new FlexLinkException(Result.REMOTE_ERROR, "communicator creation failed in round " + gen
                    + " on rank " + rank + ": " + failure);
        }
    }

    @Override
    public String toString() {
        return "InProcessRendezvous[" + token + ", " + size + " ranks]";
    }
}
