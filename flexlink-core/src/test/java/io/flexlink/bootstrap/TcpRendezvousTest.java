package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
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

/** The TCP rendezvous on loopback, its ranks played by threads. */
class TcpRendezvousTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private static UniqueId listen() {
        return TcpRendezvous.listen(InetAddress.getLoopbackAddress(), 0, CONFIG);
    }

    private List<RankExchange> joinAll(UniqueId id, int n, Duration timeout) throws Exception {
        List<Future<RankExchange>> fs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            fs.add(pool.submit(() -> TcpRendezvous.join(id, n, rank, timeout)));
        }
        List<RankExchange> out = new ArrayList<>();
        for (Future<RankExchange> f : fs) {
            out.add(f.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    private List<byte[][]> round(List<RankExchange> ex, int k) throws Exception {
        List<Future<byte[][]>> fs = new ArrayList<>();
        for (int r = 0; r < ex.size(); r++) {
            byte[] mine = ("round " + k + " rank " + r).repeat(r + 1).getBytes(StandardCharsets.UTF_8);
            RankExchange e = ex.get(r);
            fs.add(pool.submit(() -> e.allGather(mine)));
        }
        List<byte[][]> out = new ArrayList<>();
        for (Future<byte[][]> f : fs) {
            out.add(f.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    @Test
    void roundsGatherEveryRanksBytesInOrder() throws Exception {
        UniqueId id = listen();
        assertTrue(TcpRendezvous.serves(id));
        assertEquals(id, UniqueId.fromBase64(id.toBase64()));
        List<RankExchange> ex = joinAll(id, 4, TIMEOUT);
        assertFalse(TcpRendezvous.serves(id), "rank 0 took the server");
        for (int k = 0; k < 5; k++) {
            for (byte[][] all : round(ex, k)) {
                for (int r = 0; r < 4; r++) {
                    assertArrayEquals(("round " + k + " rank " + r).repeat(r + 1).getBytes(StandardCharsets.UTF_8),
                            all[r]);
                }
            }
        }
        assertTrue(ex.get(1).crossProcess());
        ex.forEach(RankExchange::close);
    }

    @Test
    void aWrongSecretIsRefusedAndTheMissingRankNamed() throws Exception {
        UniqueId id = listen();
        byte[] wrong = id.secret();
        wrong[0] ^= 1;
        UniqueId forged = UniqueId.of(id.address(), id.port(), id.tokenBytes(), wrong);
        Duration quick = Duration.ofMillis(1500);
        Future<RankExchange> r0 = pool.submit(() -> TcpRendezvous.join(id, 3, 0, quick));
        Future<RankExchange> r1 = pool.submit(() -> TcpRendezvous.join(id, 3, 1, quick));
        FlexLinkException refused = assertThrows(FlexLinkException.class, () -> TcpRendezvous.join(forged, 3, 2, quick));
        assertEquals(Result.REMOTE_ERROR, refused.result());
        assertTrue(refused.getMessage().contains("refused this rank: wrong secret"), refused.getMessage());
        RankExchange zero = r0.get(30, TimeUnit.SECONDS);
        RankExchange one = r1.get(30, TimeUnit.SECONDS);
        Future<byte[][]> g1 = pool.submit(() -> one.allGather(new byte[1]));
        FlexLinkException timedOut = assertThrows(FlexLinkException.class, () -> zero.allGather(new byte[1]));
        assertEquals(Result.REMOTE_ERROR, timedOut.result());
        assertTrue(timedOut.getMessage().contains("waiting for ranks [2] of 3"), timedOut.getMessage());
        assertTrue(timedOut.getMessage().contains("wrong secret"), "names the refused peer: " + timedOut.getMessage());
        ExecutionException e = assertThrows(ExecutionException.class, () -> g1.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("waiting for ranks [2] of 3"), e.getCause().getMessage());
        zero.close();
        one.close();
    }

    @Test
    void rankOneAloneTimesOutWaitingForRankZero() {
        UniqueId id = UniqueId.withAddress(InetAddress.getLoopbackAddress().getAddress(), 1); // nobody listens
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> TcpRendezvous.join(id, 2, 1, Duration.ofMillis(300)));
        assertEquals(Result.REMOTE_ERROR, e.result());
        assertTrue(e.getMessage().contains("could not reach rank 0"), e.getMessage());
    }

    @Test
    void rankZeroOfAForeignIdIsRefused() {
        UniqueId id = UniqueId.withAddress(InetAddress.getLoopbackAddress().getAddress(), 1);
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> TcpRendezvous.join(id, 2, 0, TIMEOUT));
        assertEquals(Result.INVALID_USAGE, e.result());
    }

    /** Ranks {@code ranks} of {@code n} joined here, in parallel (the others join elsewhere). */
    private List<RankExchange> join(UniqueId id, int n, int... ranks) throws Exception {
        List<Future<RankExchange>> fs = new ArrayList<>();
        for (int rank : ranks) {
            fs.add(pool.submit(() -> TcpRendezvous.join(id, n, rank, TIMEOUT)));
        }
        List<RankExchange> out = new ArrayList<>();
        for (Future<RankExchange> f : fs) {
            out.add(f.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    /** One round on every exchange here (the rank elsewhere takes part in it too). */
    private void roundHere(List<RankExchange> ex) throws Exception {
        List<Future<byte[][]>> fs = new ArrayList<>();
        for (RankExchange e : ex) {
            fs.add(pool.submit(() -> e.allGather(new byte[] {1})));
        }
        for (Future<byte[][]> f : fs) {
            f.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aVanishedPeerIsReportedToEveryOtherRankButAGoodbyeIsNot() throws Exception {
        UniqueId id = listen();
        try (VanishingRank three = VanishingRank.peer(id, 4, 3)) { // a process of its own: it is killed
            List<RankExchange> ex = join(id, 4, 0, 1, 2);
            assertEquals("READY", three.line());
            roundHere(ex);
            List<CountDownLatch> heard = new ArrayList<>();
            List<List<Integer>> lost = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                CountDownLatch l = new CountDownLatch(1);
                List<Integer> mine = new java.util.concurrent.CopyOnWriteArrayList<>();
                heard.add(l);
                lost.add(mine);
                ex.get(r).onPeerLost((rank, why) -> {
                    mine.add(rank);
                    if (rank == 3) {
                        l.countDown();
                    }
                });
            }
            ex.get(2).close(); // a goodbye: not a loss
            three.vanish(); // as if killed: its connection closes without a goodbye
            for (int r : new int[] {0, 1}) {
                assertTrue(heard.get(r).await(10, TimeUnit.SECONDS), "rank " + r + " heard that rank 3 is gone");
                assertEquals(List.of(3), lost.get(r), "rank " + r);
            }
            // a listener registered after the loss hears of it at once
            List<Integer> late = new ArrayList<>();
            ex.get(0).onPeerLost((rank, why) -> late.add(rank));
            assertEquals(List.of(3), late);
            ex.get(1).close();
            ex.get(0).close();
        }
    }

    @Test
    void rankZerosProcessVanishingIsNoticedByThePeers() throws Exception {
        try (VanishingRank zero = VanishingRank.root(3)) {
            String idLine = zero.line();
            assertTrue(idLine != null && idLine.startsWith("ID "), String.valueOf(idLine));
            UniqueId id = UniqueId.fromBase64(idLine.substring(3));
            List<RankExchange> ex = join(id, 3, 1, 2);
            assertEquals("READY", zero.line());
            roundHere(ex);
            CountDownLatch zeroGone = new CountDownLatch(1);
            ex.get(0).onPeerLost((rank, why) -> {
                if (rank == 0) {
                    zeroGone.countDown();
                }
            });
            zero.vanish();
            assertTrue(zeroGone.await(10, TimeUnit.SECONDS), "rank 1 heard that rank 0 is gone");
            for (RankExchange e : ex) {
                e.close();
            }
        }
    }
}
