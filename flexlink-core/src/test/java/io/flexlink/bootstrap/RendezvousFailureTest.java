package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rank whose creation fails ends the rendezvous for everybody, with its error: the others' pending
 * and later rounds fail long before the timeout (they would otherwise wait it out and say only
 * "timed out").
 */
class RendezvousFailureTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().build();
    /** Long, so that a round that waits for it could not pass the "well before the timeout" checks. */
    private static final Duration TIMEOUT = Duration.ofSeconds(40);
    /** How long a failure may take to reach the others: far below the timeout, far above any scheduling delay. */
    private static final long PROMPT_MS = TIMEOUT.toMillis() / 4;
    private static final FlexLinkException CAUSE = new FlexLinkException(Result.SYSTEM_ERROR,
            "shared memory: /dev/shm has 1 bytes free but a staging area needs 4096");
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private List<RankExchange> tcpRanks(int n) throws Exception {
        UniqueId id = TcpRendezvous.listen(InetAddress.getLoopbackAddress(), 0, CONFIG);
        List<Future<RankExchange>> fs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            fs.add(pool.submit(() -> TcpRendezvous.join(id, n, rank, TIMEOUT)));
        }
        List<RankExchange> out = new ArrayList<>();
        for (Future<RankExchange> f : fs) {
            out.add(f.get(PROMPT_MS, TimeUnit.MILLISECONDS));
        }
        // one round that completes: the failures below happen mid-creation
        List<Future<byte[][]>> round = new ArrayList<>();
        for (RankExchange e : out) {
            round.add(pool.submit(() -> e.allGather(new byte[] {1})));
        }
        for (Future<byte[][]> f : round) {
            assertEquals(n, f.get(PROMPT_MS, TimeUnit.MILLISECONDS).length);
        }
        return out;
    }

    /** Starts a round on {@code ex} and returns it once the round's thread runs. */
    private Future<byte[][]> pending(RankExchange ex) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        Future<byte[][]> f = pool.submit(() -> {
            started.countDown();
            return ex.allGather(new byte[] {2});
        });
        started.await();
        return f;
    }

    /** The round fails promptly (well before the timeout) with REMOTE_ERROR; returns its message. */
    private static String failsPromptly(Future<byte[][]> round) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> round.get(PROMPT_MS, TimeUnit.MILLISECONDS), "the round ends well before the timeout");
        FlexLinkException f = assertInstanceOf(FlexLinkException.class, e.getCause());
        assertEquals(Result.REMOTE_ERROR, f.result(), f.getMessage());
        return f.getMessage();
    }

    @Test
    void rankZeroFailingEndsThePeersRoundsWithItsError() throws Exception {
        List<RankExchange> ex = tcpRanks(3);
        Future<byte[][]> one = pending(ex.get(1));
        Future<byte[][]> two = pending(ex.get(2));
        ex.get(0).fail(CAUSE);
        for (Future<byte[][]> round : List.of(one, two)) {
            String m = failsPromptly(round);
            assertTrue(m.contains("rank 0 is gone: its communicator creation failed: SYSTEM_ERROR: shared memory: "
                    + "/dev/shm has 1 bytes free"), m);
        }
        // and a later round fails at once, with the same words
        String later = failsPromptly(pool.submit(() -> ex.get(1).allGather(new byte[] {3})));
        assertTrue(later.contains("its communicator creation failed: SYSTEM_ERROR"), later);
        ex.get(1).close();
        ex.get(2).close();
    }

    @Test
    void rankZeroClosingWithoutAReasonStillEndsThePeersRounds() throws Exception {
        List<RankExchange> ex = tcpRanks(2);
        Future<byte[][]> one = pending(ex.get(1));
        ex.get(0).close();
        String m = failsPromptly(one);
        assertTrue(m.contains("rank 0 ended the rendezvous"), m);
        assertTrue(failsPromptly(pool.submit(() -> ex.get(1).allGather(new byte[0]))).contains("rank 0 ended"));
        assertEquals(java.util.Map.of(), ((RendezvousClient) ex.get(1)).lostRanks(), "a goodbye is no loss");
        ex.get(1).close();
    }

    @Test
    void aPeerFailingEndsRankZerosAndTheOtherPeersRounds() throws Exception {
        List<RankExchange> ex = tcpRanks(3);
        Future<byte[][]> zero = pending(ex.get(0));
        Future<byte[][]> one = pending(ex.get(1));
        ex.get(2).fail(CAUSE);
        for (Future<byte[][]> round : List.of(zero, one)) {
            String m = failsPromptly(round);
            assertTrue(m.contains("rank 2 is gone: its communicator creation failed: SYSTEM_ERROR: shared memory"), m);
        }
        ex.get(0).close();
        ex.get(1).close();
    }

    @Test
    void aPeerFailingBeforeRankZerosRoundFailsThatRoundAtOnce() throws Exception {
        List<RankExchange> ex = tcpRanks(3);
        CountDownLatch heard = new CountDownLatch(1);
        ex.get(1).onPeerLost((rank, why) -> heard.countDown());
        ex.get(2).fail(new IllegalStateException("no device"));
        assertTrue(heard.await(PROMPT_MS, TimeUnit.MILLISECONDS), "rank 1 heard of it from rank 0");
        String m = failsPromptly(pool.submit(() -> ex.get(0).allGather(new byte[0])));
        assertTrue(m.contains("rank 2 is gone: its communicator creation failed: IllegalStateException: no device"), m);
        assertTrue(failsPromptly(pool.submit(() -> ex.get(1).allGather(new byte[0]))).contains("no device"));
        ex.get(0).close();
        ex.get(1).close();
    }

    @Test
    void aCancelledUniqueIdFreesItsPortAndFailsThePeersThatJoined() throws Exception {
        UniqueId id = TcpRendezvous.listen(InetAddress.getLoopbackAddress(), 0, CONFIG);
        RankExchange one = pool.submit(() -> TcpRendezvous.join(id, 2, 1, TIMEOUT))
                .get(PROMPT_MS, TimeUnit.MILLISECONDS);
        Future<byte[][]> round = pending(one);
        assertTrue(TcpRendezvous.cancel(id));
        assertTrue(!TcpRendezvous.serves(id));
        assertTrue(failsPromptly(round).contains("was cancelled"));
        assertThrows(java.net.ConnectException.class,
                () -> new java.net.Socket(InetAddress.getLoopbackAddress(), id.port()).close(), "the port is free");
        FlexLinkException late = assertThrows(FlexLinkException.class, () -> TcpRendezvous.join(id, 2, 0, TIMEOUT));
        assertEquals(Result.INVALID_USAGE, late.result());
        assertTrue(!TcpRendezvous.cancel(id), "nothing left to cancel");
        one.close();
    }

    /**
     * A round racing rank 0's ABORT, many times over: the round may start before the ABORT, while the reader
     * handles it, or after it closed the socket, and each time it fails with rank 0's reason. (While the reader closed
     * the socket before it recorded the reason, a round could fail on that closed socket with "Socket closed":
     * this test did so within 150 attempts in each of three runs.)
     */
    @Test
    void aRoundRacingRankZerosAbortAlwaysFailsWithItsReason() throws Exception {
        for (int i = 0; i < 500; i++) {
            UniqueId id = TcpRendezvous.listen(InetAddress.getLoopbackAddress(), 0, CONFIG);
            RankExchange one = pool.submit(() -> TcpRendezvous.join(id, 2, 1, TIMEOUT))
                    .get(PROMPT_MS, TimeUnit.MILLISECONDS);
            Future<byte[][]> round = pool.submit(() -> one.allGather(new byte[] {2}));
            assertTrue(TcpRendezvous.cancel(id));
            String m = failsPromptly(round);
            assertTrue(m.contains("was cancelled"), "attempt " + i + ": " + m);
            one.close();
        }
    }

    @Test
    void inProcessRanksWaitingForAFailedRankFailWithItsError() throws Exception {
        String token = UniqueId.random().token();
        List<RankExchange> ex = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            ex.add(InProcessRendezvous.join(token, 3, r, TIMEOUT));
        }
        try {
            Future<byte[][]> one = pending(ex.get(1));
            Future<byte[][]> two = pending(ex.get(2));
            ex.get(0).fail(CAUSE);
            for (Future<byte[][]> round : List.of(one, two)) {
                String m = failsPromptly(round);
                assertTrue(m.contains("rank 0's communicator creation failed: SYSTEM_ERROR: shared memory"), m);
            }
            assertTrue(failsPromptly(pool.submit(() -> ex.get(1).allGather(new byte[0]))).contains("rank 0's"));
        } finally {
            for (int r = 0; r < 3; r++) {
                InProcessRendezvous.leave(token);
            }
        }
    }
}
