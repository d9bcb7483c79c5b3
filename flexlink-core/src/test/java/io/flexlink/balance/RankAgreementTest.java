package io.flexlink.balance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Ranks with deliberately different local timings (each rank's streams delayed differently, each rank's
 * thread pausing at random between calls) must still split every call identically: the balancer decides
 * only from measurements all ranks agree on.
 */
class RankAgreementTest {
    @Test
    void splitsNeverDivergeUnderDifferentLocalTimings() throws Exception {
        int ranks = 3;
        int calls = 80;
        FlexLinkConfig config = FlexLinkConfig.builder()
                .set(FlexLinkConfig.EMULATE, "primary:400MB/s,pcie:100MB/s")
                .set(FlexLinkConfig.CHUNK_BYTES, "64K")
                .set(FlexLinkConfig.BALANCE_WINDOW, "2")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "64K")
                .set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.INIT_TIMEOUT, "60s")
                .build();
        // rank r's streams run slower by a rank-specific random delay: its local timings differ
        HostFaults delays = (label, op) -> {
            int r = label.charAt(label.length() - 1) - '0';
            if (op == HostFaults.Op.COPY || op == HostFaults.Op.REDUCE) {
                LockSupport.parkNanos(ThreadLocalSeed.next(r) % (50_000L * (r + 1)));
            }
            return HostFaults.Action.RUN;
        };
        try (HostBackend backend = new HostBackend(config, delays)) {
            UniqueId id = FlexLink.getUniqueId();
            ExecutorService pool = Executors.newFixedThreadPool(ranks);
            List<Future<long[][]>> futures = new ArrayList<>();
            for (int r = 0; r < ranks; r++) {
                int rank = r;
                futures.add(pool.submit(() -> drive(backend, config, id, ranks, rank, calls)));
            }
            long[][][] splits = new long[ranks][][];
            for (int r = 0; r < ranks; r++) {
                splits[r] = futures.get(r).get(5, TimeUnit.MINUTES);
            }
            pool.shutdown();
            int changes = 0;
            for (int i = 0; i < calls; i++) {
                for (int r = 1; r < ranks; r++) {
                    assertEquals(splits[0][i][0], splits[r][i][0], "call " + i + ": primary bytes of rank " + r);
                    assertEquals(splits[0][i][1], splits[r][i][1], "call " + i + ": pcie bytes of rank " + r);
                }
                if (i > 0 && splits[0][i][1] != splits[0][i - 1][1]) {
                    changes++;
                }
            }
            assertTrue(changes >= 3, "the balancer moved the split " + changes + " times");
        }
    }

    /** Runs {@code calls} AllReduces on one rank; returns per call the bytes each path carried. */
    private static long[][] drive(HostBackend backend, FlexLinkConfig config, UniqueId id, int ranks, int rank,
                                  int calls) {
        Communicator comm = FlexLink.initRank(backend, config, ranks, id, rank, rank);
        RuntimeStream stream = backend.createStream(rank, "user.r" + rank);
        long count = (4 << 20) / 4;
        SplittableRandom pause = new SplittableRandom(rank * 7919L);
        long[][] out = new long[calls][2];
        try (DeviceMemory send = backend.allocate(rank, count * 4); DeviceMemory recv = backend.allocate(rank, count * 4)) {
            backend.fill(send.address(), count * 4, (byte) 3);
            long[] before = {0, 0};
            for (int i = 0; i < calls; i++) {
                if (pause.nextInt(3) == 0) {
                    LockSupport.parkNanos(pause.nextInt(2_000_000));
                }
                comm.allReduce(send, recv, count, DataType.FLOAT32, ReduceOp.SUM, stream);
                stream.synchronize();
                List<CommStats.PathTotals> t = comm.stats().paths();
                out[i][0] = t.get(0).bytes() - before[0];
                out[i][1] = t.get(1).bytes() - before[1];
                before[0] = t.get(0).bytes();
                before[1] = t.get(1).bytes();
            }
            assertTrue(!comm.stats().stages().isEmpty(), "the balancer tuned the channel");
        } finally {
            comm.close();
            stream.close();
        }
        return out;
    }

    /** A per-rank deterministic sequence shared by that rank's stream threads. */
    static final class ThreadLocalSeed {
        private static final long[] STATE = new long[10];

        static synchronized long next(int r) {
            STATE[r] = STATE[r] * 6364136223846793005L + 1442695040888963407L + r;
            return (STATE[r] >>> 17) & Long.MAX_VALUE;
        }
    }
}
