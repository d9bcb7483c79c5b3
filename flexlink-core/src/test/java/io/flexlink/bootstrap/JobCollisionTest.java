package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two jobs launched on one MASTER_ADDR:MASTER_PORT with the same world size and no job id derive the same
 * rendezvous id, so job A's rank 0 admits job B's rank 1 as its own. That cannot be told apart when it
 * happens, but the job's rank 0 keeps listening while the communicator lives, and any later sign of the
 * other job — its rank 0 whose bind failed, or its rank 1 arriving again — ends the communicator on every
 * rank and fails the intruder, so that neither job runs with the other's rank.
 */
class JobCollisionTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder()
            .set(FlexLinkConfig.INIT_TIMEOUT, "20s").environment(Map.of()).build();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private static LaunchEnv env(int rank, int world, int port) {
        Map<String, String> m = new HashMap<>(Map.of("RANK", String.valueOf(rank), "WORLD_SIZE", String.valueOf(world),
                "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", String.valueOf(port)));
        return LaunchEnv.parse(m);
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Job A's rank 0 and job B's rank 1, joined into one communicator (the id is the same). */
    private RankExchange[] crossJoined(int port) throws Exception {
        Future<RankExchange> zero = pool.submit(() -> TcpRendezvous.fromEnv(env(0, 2, port), CONFIG));
        Future<RankExchange> one = pool.submit(() -> TcpRendezvous.fromEnv(env(1, 2, port), CONFIG));
        RankExchange a0 = zero.get(30, TimeUnit.SECONDS);
        RankExchange b1 = one.get(30, TimeUnit.SECONDS);
        Future<byte[][]> round = pool.submit(() -> b1.allGather(new byte[] {1}));
        assertEquals(2, a0.allGather(new byte[] {0}).length);
        assertEquals(2, round.get(30, TimeUnit.SECONDS).length);
        return new RankExchange[] {a0, b1};
    }

    private static CountDownLatch hearsLoss(RankExchange e, AtomicReference<String> why) {
        CountDownLatch l = new CountDownLatch(1);
        e.onPeerLost((rank, reason) -> {
            why.compareAndSet(null, reason);
            l.countDown();
        });
        return l;
    }

    /** A HELLO as {@code rank} of a 2-rank communicator of {@code id} (another process's); returns the REJECT text. */
    private static String hello(int port, UniqueId id, int rank) throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(Wire.HELLO);
            out.writeInt(0);
            out.writeInt(Wire.HELLO_PAYLOAD);
            out.write(Wire.hello(id.tokenBytes(), id.secret(), 2, rank));
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            assertEquals(Wire.REJECT, in.readInt());
            in.readInt();
            byte[] text = new byte[in.readInt()];
            in.readFully(text);
            return new String(text, StandardCharsets.UTF_8);
        }
    }

    @Test
    void anotherJobsRankZeroEndsTheCommunicatorOnEveryRank() throws Exception {
        int port = freePort();
        RankExchange[] ab = crossJoined(port);
        AtomicReference<String> zeroHeard = new AtomicReference<>();
        AtomicReference<String> oneHeard = new AtomicReference<>();
        CountDownLatch zero = hearsLoss(ab[0], zeroHeard);
        CountDownLatch one = hearsLoss(ab[1], oneHeard);
        UniqueId id = env(0, 2, port).uniqueId(new byte[] {127, 0, 0, 1}, new byte[0], "", 0);
        String answer = hello(port, id, 0); // what job B's rank 0 says when its bind fails
        assertTrue(answer.contains("collision") && answer.contains("MASTER_PORT"), answer);
        assertTrue(zero.await(10, TimeUnit.SECONDS), "job A's rank 0 stops its communicator");
        assertTrue(one.await(10, TimeUnit.SECONDS), "and job B's rank 1, which it had taken, hears it");
        assertTrue(zeroHeard.get().contains("two jobs share the rendezvous"), zeroHeard.get());
        assertTrue(oneHeard.get().contains("two jobs share the rendezvous"), oneHeard.get());
        FlexLinkException next = assertThrows(FlexLinkException.class, () -> ab[0].allGather(new byte[0]));
        assertEquals(Result.REMOTE_ERROR, next.result());
        ab[1].close();
        ab[0].close();
    }

    @Test
    void aRankArrivingTwiceEndsTheCommunicatorAndIsRefused() throws Exception {
        int port = freePort();
        RankExchange[] ab = crossJoined(port);
        AtomicReference<String> heard = new AtomicReference<>();
        CountDownLatch zero = hearsLoss(ab[0], heard);
        // job A's own rank 1, late (another process: the same id): rank 1 of this communicator joined already
        UniqueId id = env(1, 2, port).uniqueId(new byte[] {127, 0, 0, 1}, new byte[0], "", 0);
        String refused = hello(port, id, 1);
        assertTrue(refused.contains("collision"), refused);
        assertTrue(zero.await(10, TimeUnit.SECONDS), "job A's rank 0 stops");
        assertTrue(heard.get().contains("claims rank 1"), heard.get());
        ab[1].close();
        ab[0].close();
    }

    @Test
    void aBindFailureAgainstTheSameJobsRankZeroFailsBothSides() throws Exception {
        int port = freePort();
        RankExchange[] ab = crossJoined(port);
        AtomicReference<String> heard = new AtomicReference<>();
        CountDownLatch zero = hearsLoss(ab[0], heard);
        // what job B's rank 0 runs when its bind of the port fails
        UniqueId id = env(0, 2, port).uniqueId(new byte[] {127, 0, 0, 1}, new byte[0], "", 0);
        String answer = RendezvousClient.claimRankZero(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(),
                port), id.tokenBytes(), id.secret(), 2);
        assertTrue(answer != null && answer.contains("collision"), String.valueOf(answer));
        assertTrue(zero.await(10, TimeUnit.SECONDS), "job A's rank 0 stops");
        ab[1].close();
        ab[0].close();
    }

    @Test
    void aRankOfAnotherWorldSizeHearsThatTheSizesDiffer() throws Exception {
        int port = freePort();
        Future<RankExchange> zero = pool.submit(() -> TcpRendezvous.fromEnv(env(0, 2, port), CONFIG));
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> TcpRendezvous.fromEnv(env(1, 3, port),
                CONFIG));
        assertTrue(e.getMessage().contains("the world sizes differ: it has 3 ranks (WORLD_SIZE), rank 0 has 2"),
                e.getMessage());
        assertTrue(!e.getMessage().contains("wrong secret"), e.getMessage());
        RankExchange z = zero.get(30, TimeUnit.SECONDS);
        z.close();
    }

    @Test
    void theJobsSecondCommunicatorSharesThePortAndLateRanksRetry() throws Exception {
        int port = freePort();
        Future<RankExchange> zero = pool.submit(() -> TcpRendezvous.fromEnv(env(0, 2, port), CONFIG));
        Future<RankExchange> one = pool.submit(() -> TcpRendezvous.fromEnv(env(1, 2, port), CONFIG));
        RankExchange z = zero.get(30, TimeUnit.SECONDS);
        RankExchange o = one.get(30, TimeUnit.SECONDS);
        // rank 1 makes its second communicator before rank 0 does: the port answers RETRY until rank 0 opens it
        Future<RankExchange> secondOne = pool.submit(() -> TcpRendezvous.fromEnv(env(1, 2, port), CONFIG));
        assertThrows(java.util.concurrent.TimeoutException.class, () -> secondOne.get(300, TimeUnit.MILLISECONDS),
                "it waits for rank 0");
        RankExchange secondZero = TcpRendezvous.fromEnv(env(0, 2, port), CONFIG);
        RankExchange so = secondOne.get(30, TimeUnit.SECONDS);
        Future<byte[][]> r = pool.submit(() -> so.allGather(new byte[] {1}));
        assertEquals(2, secondZero.allGather(new byte[] {0}).length);
        assertEquals(2, r.get(30, TimeUnit.SECONDS).length);
        for (RankExchange e : new RankExchange[] {so, secondZero, o, z}) {
            e.close();
        }
        // the last communicator gone, the port is free again (for a listener that, like the rendezvous, takes a
        // port whose old connections are in TIME_WAIT) once the accepting thread has left the closed socket
        assertTrue(io.flexlink.testing.Bounded.await(() -> {
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(true);
                s.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                return true;
            } catch (java.io.IOException e) {
                return false;
            }
        }, java.time.Duration.ofSeconds(10)), "the port is free");
    }

    @Test
    void aPeerWhoseCommunicatorFailedEndsItsOwnPendingRound() throws Exception {
        int port = freePort();
        Future<RankExchange> zero = pool.submit(() -> TcpRendezvous.fromEnv(env(0, 3, port), CONFIG));
        RankExchange one = TcpRendezvous.fromEnv(env(1, 3, port), CONFIG);
        Future<byte[][]> pending = pool.submit(() -> one.allGather(new byte[0])); // rank 2 never comes
        one.fail(new FlexLinkException(Result.SYSTEM_ERROR, "this rank gave up"));
        ExecutionException e = assertThrows(ExecutionException.class, () -> pending.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("left the rendezvous"), e.getCause().getMessage());
        zero.get(30, TimeUnit.SECONDS).close();
    }
}
