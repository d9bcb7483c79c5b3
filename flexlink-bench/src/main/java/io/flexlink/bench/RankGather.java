package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Small all-gathers of numbers among the processes of a --from-env run, through the communicator
 * itself (an 8-element INT64 AllGather, which stays on the primary path): the header's pids and
 * devices, each row's times and wrong counts, and rank 0's decisions that every process must follow.
 */
final class RankGather implements AutoCloseable {
    private static final int SLOTS = 8;

    private final Backend backend;
    private final Communicator comm;
    private final RuntimeStream stream;
    private final DeviceMemory buffer;
    private final ByteBuffer host;

    RankGather(Backend backend, Communicator comm) {
        this.backend = backend;
        this.comm = comm;
        this.stream = backend.createStream(comm.device(), "perf.gather");
        long bytes = (long) SLOTS * 8 * (comm.size() + 1);
        this.buffer = backend.allocate(comm.device(), bytes);
        this.host = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
    }

    /** Every rank's {@code mine} (at most 8 values), indexed by rank. */
    long[][] gather(long... mine) {
        host.clear();
        for (int i = 0; i < SLOTS; i++) {
            host.putLong(i < mine.length ? mine[i] : 0);
        }
        host.flip();
        backend.upload(buffer.address(), host);
        long recv = buffer.address() + SLOTS * 8;
        comm.allGather(buffer.address(), recv, SLOTS, DataType.INT64, stream);
        stream.synchronize();
        int n = comm.size();
        host.clear().limit(n * SLOTS * 8);
        backend.download(host, recv);
        long[][] all = new long[n][mine.length];
        for (int r = 0; r < n; r++) {
            for (int i = 0; i < mine.length; i++) {
                all[r][i] = host.getLong((r * SLOTS + i) * 8);
            }
        }
        return all;
    }

    /** Rank 0's {@code value}, on every rank (a decision all processes must take alike). */
    long fromRankZero(long value) {
        return gather(value)[0][0];
    }

    /** Returns when every process has called it (-z 1 and -z 3's barrier between processes). */
    void barrier() {
        gather(0);
    }

    /** Every rank's {@code mine} (any length), indexed by rank: the lengths first, then 64 bytes per round. */
    byte[][] gatherBytes(byte[] mine) {
        long[][] lengths = gather(mine.length);
        int n = lengths.length;
        byte[][] all = new byte[n][];
        long longest = 0;
        for (int r = 0; r < n; r++) {
            all[r] = new byte[(int) lengths[r][0]];
            longest = Math.max(longest, lengths[r][0]);
        }
        long[] words = new long[SLOTS];
        for (int at = 0; at < longest; at += SLOTS * 8) {
            java.util.Arrays.fill(words, 0);
            for (int i = 0; i < SLOTS * 8 && at + i < mine.length; i++) {
                words[i / 8] |= (mine[at + i] & 0xFFL) << (8 * (i % 8));
            }
            long[][] round = gather(words);
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < SLOTS * 8 && at + i < all[r].length; i++) {
                    all[r][at + i] = (byte) (round[r][i / 8] >>> (8 * (i % 8)));
                }
            }
        }
        return all;
    }

    /**
     * The processes' exchange for creating the host baseline's ring communicators ({@link PrimaryCalls}),
     * over this gather: its ranks live in different processes, so shared memory must cross processes.
     */
    io.flexlink.runtime.RankExchange exchange() {
        return new io.flexlink.runtime.RankExchange() {
            @Override
            public byte[][] allGather(byte[] bytes) {
                return gatherBytes(bytes);
            }

            @Override
            public boolean crossProcess() {
                return true;
            }
        };
    }

    @Override
    public void close() {
        try {
            stream.synchronize();
        } catch (RuntimeException e) {
            // the run reports it
        }
        stream.close();
        buffer.close();
    }
}
