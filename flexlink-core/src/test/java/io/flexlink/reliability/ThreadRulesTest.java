package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The thread rules of docs/operations.md: communicators are independent, so each may be driven by its
 * own thread at the same time; one communicator shared by two threads serializes their calls (the calls
 * of each rank must still pair up in the same order on every rank); abort() is safe from any thread,
 * also while the ranks' threads are calling.
 */
class ThreadRulesTest {
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
            .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
            .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TIMEOUT, "30s").build();

    private static <T> List<T> all(ExecutorService pool, List<Callable<T>> tasks) throws Exception {
        List<Future<T>> futures = new ArrayList<>();
        for (Callable<T> t : tasks) {
            futures.add(pool.submit(t));
        }
        List<T> out = new ArrayList<>();
        for (Future<T> f : futures) {
            out.add(f.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        }
        return out;
    }

    private static void closeAndCheck(HostBackend backend, int threads, Communicator[]... sets) {
        for (Communicator[] set : sets) {
            for (Communicator c : set) {
                c.close();
            }
        }
        assertEquals(0, backend.liveBytes());
        assertEquals(0, backend.liveStreams());
        backend.close();
        Bounded.threadsBackTo(threads, BOUND);
    }

    @Test
    void differentCommunicatorsRunAtOnceFromTheirOwnThreads() throws Exception {
        int threads = Bounded.flexlinkThreads().size();
        HostBackend backend = new HostBackend(CONFIG);
        Communicator[] a = FlexLink.initAll(backend, CONFIG, 0, 1);
        Communicator[] b = FlexLink.initAll(backend, CONFIG, 2, 3);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Callable<Long>> ranks = new ArrayList<>();
        for (Communicator comm : new Communicator[] {a[0], a[1], b[0], b[1]}) {
            ranks.add(() -> {
                long wrong = 0;
                try (RankCheck rc = new RankCheck(backend, comm, "user.d" + comm.device(), 4000)) {
                    for (int i = 0; i < 25; i++) {
                        wrong += rc.run(Collective.values()[i % 5], i % 2 == 0 ? DataType.FLOAT32 : DataType.INT64,
                                ReduceOp.SUM, 3000 + 37L * i, i % 2, i);
                    }
                }
                return wrong;
            });
        }
        assertEquals(List.of(0L, 0L, 0L, 0L), all(pool, ranks));
        pool.shutdown();
        closeAndCheck(backend, threads, a, b);
    }

    @Test
    void twoThreadsSharingOneCommunicatorAreSerialized() throws Exception {
        int threads = Bounded.flexlinkThreads().size();
        HostBackend backend = new HostBackend(CONFIG);
        Communicator[] comms = FlexLink.initAll(backend, CONFIG, 0, 1);
        int m = 20;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        List<Callable<Long>> tasks = new ArrayList<>();
        // rank 0 from two threads, each with its own stream and buffers; rank 1 from one thread, 2m calls:
        // every call has the same inputs, so any order in which rank 0's calls are serialized pairs correctly
        for (int t = 0; t < 3; t++) {
            int thread = t;
            tasks.add(() -> {
                Communicator comm = comms[thread < 2 ? 0 : 1];
                long wrong = 0;
                try (RankCheck rc = new RankCheck(backend, comm, "user.t" + thread, 20_000)) {
                    go.await();
                    for (int i = 0; i < (thread < 2 ? m : 2 * m); i++) {
                        wrong += rc.run(Collective.ALL_REDUCE, DataType.INT32, ReduceOp.SUM, 16_411, 0, 7);
                    }
                }
                return wrong;
            });
        }
        List<Future<Long>> futures = new ArrayList<>();
        for (Callable<Long> t : tasks) {
            futures.add(pool.submit(t));
        }
        go.countDown();
        for (Future<Long> f : futures) {
            assertEquals(0L, f.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
        }
        pool.shutdown();
        assertEquals(io.flexlink.Result.SUCCESS, comms[0].getAsyncError());
        closeAndCheck(backend, threads, comms);
    }

    @Test
    void abortFromAnotherThreadWhileTheRanksAreCalling() throws Exception {
        int threads = Bounded.flexlinkThreads().size();
        HostBackend backend = new HostBackend(CONFIG);
        Communicator[] comms = FlexLink.initAll(backend, CONFIG, 0, 1);
        AtomicInteger calls = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Callable<Throwable>> ranks = new ArrayList<>();
        for (Communicator comm : comms) {
            ranks.add(() -> {
                try (RankCheck rc = new RankCheck(backend, comm, "user.r" + comm.rank(), 8000)) {
                    for (int i = 0; i < 100_000; i++) {
                        rc.run(Collective.values()[i % 5], DataType.FLOAT32, ReduceOp.SUM, 7000, 0, i);
                        calls.incrementAndGet();
                    }
                    return null;
                } catch (FlexLinkException e) {
                    return e;
                }
            });
        }
        List<Future<Throwable>> futures = new ArrayList<>();
        for (Callable<Throwable> r : ranks) {
            futures.add(pool.submit(r));
        }
        Bounded.within(BOUND, () -> calls.get() >= 6, () -> calls.get() + " calls");
        comms[0].abort();
        for (Future<Throwable> f : futures) {
            Throwable t = f.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(t instanceof FlexLinkException, "each rank's thread ended with FlexLink's error: " + t);
        }
        pool.shutdown();
        closeAndCheck(backend, threads, comms);
    }
}
