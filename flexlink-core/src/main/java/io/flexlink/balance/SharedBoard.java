package io.flexlink.balance;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PinnedMemory;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The balance board in host memory shared by the ranks (the same kind of memory as the staging areas,
 * so it works across processes too). Entry {@code d} of a channel lives in ring slot {@code d % 4}: a
 * rank cannot pass decision {@code d+1} before every rank published {@code d}, so no rank is ever more
 * than two decisions ahead of a reader and four slots never collide. Each entry is one 64-byte line:
 * tag ({@code d + 1}, written last, release), share version, status, per-path times as float bits.
 */
public final class SharedBoard implements BalanceBoard, AutoCloseable {
    static final int RING = 4;
    static final int ENTRY = 64;
    static final int MAX_PATHS = (ENTRY - 12) / 4;

    private final PinnedMemory memory;
    private final int rank;
    private final int ranks;
    private final int paths;
    private final long timeoutNanos;
    private volatile java.util.function.BooleanSupplier cancelled = () -> false;

    public SharedBoard(PinnedMemory memory, int rank, int ranks, int paths, Duration timeout) {
        if (paths > MAX_PATHS) {
            throw new IllegalArgumentException("balance board: at most " + MAX_PATHS + " paths");
        }
        this.memory = memory;
        this.rank = rank;
        this.ranks = ranks;
        this.paths = paths;
        this.timeoutNanos = timeout.toNanos();
    }

    public static long bytes(int ranks) {
        return abortOffset(ranks) + ENTRY;
    }

    /** The board's abort word: 0, or the rank that aborted the communicator plus one (any rank, any process). */
    private static long abortOffset(int ranks) {
        return (long) SizeBuckets.channels() * RING * ranks * ENTRY;
    }

    /** Tells every rank's waits on this board that {@code byRank} aborted the communicator; idempotent. */
    public void abort(int byRank) {
        long at = abortOffset(ranks);
        if (memory.readCounter(at) == 0) {
            memory.writeCounter(at, byRank + 1);
        }
    }

    private long entry(int channel, long decision, int r) {
        return (((long) channel * RING + decision % RING) * ranks + r) * ENTRY;
    }

    @Override
    public void publish(int channel, long decision, int version, float[] times) {
        long e = entry(channel, decision, rank);
        if (times != null) {
            for (int p = 0; p < paths; p++) {
                memory.writeCounter(e + 12 + 4L * p, Float.floatToRawIntBits(times[p]));
            }
        }
        memory.writeCounter(e + 4, version);
        memory.writeCounter(e + 8, times == null ? 0 : 1);
        memory.writeCounter(e, (int) (decision + 1));
    }

    @Override
    public boolean collect(int channel, long decision, int version, float[] maxTimes) {
        java.util.Arrays.fill(maxTimes, 0, paths, Float.NaN);
        boolean all = true;
        for (int r = 0; r < ranks; r++) {
            long e = entry(channel, decision, r);
            await(e, (int) (decision + 1), r, channel);
            if (memory.readCounter(e + 8) != 1 || memory.readCounter(e + 4) != version) {
                all = false;
                continue;
            }
            for (int p = 0; p < paths; p++) {
                float t = Float.intBitsToFloat(memory.readCounter(e + 12 + 4L * p));
                if (!Float.isNaN(t) && (Float.isNaN(maxTimes[p]) || t > maxTimes[p])) {
                    maxTimes[p] = t;
                }
            }
        }
        return all;
    }

    /** Waits for rank {@code r}'s host to publish; peers publish from their enqueueing threads, not the device. */
    /** Makes a wait for a peer give up (REMOTE_ERROR) once {@code condition} holds: the communicator was aborted. */
    public void cancelWhen(java.util.function.BooleanSupplier condition) {
        this.cancelled = condition;
    }

    private void await(long entry, int tag, int r, int channel) {
        long deadline = 0;
        for (int spin = 0; ; spin++) {
            int seen = memory.readCounter(entry);
            if (seen == tag) {
                return;
            }
            if (seen - tag > 0) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, "balance board: rank " + r + " overwrote entry "
                        + (tag - 1) + " of " + SizeBuckets.label(channel) + " before it was read");
            }
            if (spin < 100) {
                Thread.onSpinWait();
                continue;
            }
            long now = System.nanoTime();
            if (deadline == 0) {
                deadline = now + timeoutNanos;
            } else if (now > deadline) {
                throw new FlexLinkException(Result.REMOTE_ERROR, "balance board: rank " + r
                        + " did not reach call " + (tag - 1) + " of " + SizeBuckets.label(channel) + " within "
                        + timeoutNanos / 1_000_000 + " ms");
            }
            int abortedBy = memory.readCounter(abortOffset(ranks)) - 1;
            if (abortedBy >= 0) {
                throw new FlexLinkException(Result.REMOTE_ERROR, "balance board: rank " + abortedBy + " aborted the "
                        + "communicator while this rank waited for rank " + r + " to reach call " + (tag - 1) + " of "
                        + SizeBuckets.label(channel));
            }
            if (cancelled.getAsBoolean()) {
                throw new FlexLinkException(Result.REMOTE_ERROR, "balance board: the communicator was aborted while "
                        + "waiting for rank " + r + " to reach call " + (tag - 1) + " of " + SizeBuckets.label(channel));
            }
            LockSupport.parkNanos(20_000);
        }
    }

    @Override
    public void close() {
        memory.close();
    }
}
