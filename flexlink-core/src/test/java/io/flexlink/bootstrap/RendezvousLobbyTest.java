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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Ids any process may join: the lobby sends every rank on to rank 0's own rendezvous (ranks played by threads). */
class RendezvousLobbyTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private Future<RankExchange> join(UniqueId id, int n, int rank) {
        return pool.submit(() -> TcpRendezvous.join(id, n, rank, TIMEOUT));
    }

    private static void checkRound(List<RankExchange> ex, ExecutorService pool) throws Exception {
        List<Future<byte[][]>> fs = new ArrayList<>();
        for (int r = 0; r < ex.size(); r++) {
            byte[] mine = ("rank " + r).repeat(r + 1).getBytes(StandardCharsets.UTF_8);
            RankExchange e = ex.get(r);
            fs.add(pool.submit(() -> e.allGather(mine)));
        }
        for (Future<byte[][]> f : fs) {
            byte[][] all = f.get(30, TimeUnit.SECONDS);
            for (int r = 0; r < ex.size(); r++) {
                assertArrayEquals(("rank " + r).repeat(r + 1).getBytes(StandardCharsets.UTF_8), all[r]);
            }
        }
    }

    /** Peers that come before rank 0 wait in the lobby; rank 0's arrival sends them on; then the lobby closes. */
    @Test
    void peersBeforeAndAfterRankZeroMeetItAndTheLobbyCloses() throws Exception {
        UniqueId id = TcpRendezvous.anyProcess(CONFIG);
        assertEquals(UniqueId.LOBBY, id.flags());
        assertArrayEquals(InetAddress.getLoopbackAddress().getAddress(), id.address());
        assertTrue(RendezvousLobby.isOpen(id));
        UniqueId copy = UniqueId.fromBytes(id.toBytes());
        List<Future<RankExchange>> fs = new ArrayList<>();
        fs.add(null);
        fs.add(join(copy, 4, 1));
        fs.add(join(copy, 4, 2));
        fs.set(0, join(copy, 4, 0));
        fs.add(join(copy, 4, 3));
        List<RankExchange> ex = new ArrayList<>();
        for (Future<RankExchange> f : fs) {
            ex.add(f.get(30, TimeUnit.SECONDS));
        }
        assertFalse(RendezvousLobby.isOpen(id), "every rank was sent on: the lobby is closed");
        checkRound(ex, pool);
        checkRound(ex, pool);
        for (RankExchange e : ex) {
            e.close();
        }
    }

    @Test
    void aSingleRankClosesTheLobby() throws Exception {
        UniqueId id = TcpRendezvous.anyProcess(CONFIG);
        RankExchange e = TcpRendezvous.join(id, 1, 0, TIMEOUT);
        assertFalse(RendezvousLobby.isOpen(id));
        assertArrayEquals(new byte[] {7}, e.allGather(new byte[] {7})[0]);
    }

    @Test
    void aSecondRankZeroIsRefusedNamingTheFirst() throws Exception {
        UniqueId id = TcpRendezvous.anyProcess(CONFIG);
        RankExchange zero = TcpRendezvous.join(id, 3, 0, TIMEOUT);
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> RendezvousLobby.register(id, 3, 1, TIMEOUT));
        assertEquals(Result.INVALID_USAGE, e.result());
        assertTrue(e.getMessage().contains("rank 0 joined it already"), e.getMessage());
        zero.close();
    }

    /** An id nobody uses: its lobby frees its port and thread after flexlink.initTimeout; a late rank fails. */
    @Test
    void anUnusedIdExpires() throws Exception {
        FlexLinkConfig quick = FlexLinkConfig.builder().set(FlexLinkConfig.INIT_TIMEOUT, "200ms").build().conclude();
        UniqueId id = TcpRendezvous.anyProcess(quick);
        List<String> threads = List.of("flexlink-id-lobby-" + id.port(), "flexlink-rendezvous-accept-" + id.port(),
                "flexlink-rendezvous-hello-" + id.port());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (RendezvousLobby.isOpen(id) || threads.stream().anyMatch(RendezvousLobbyTest::threadAlive)) {
            // the expiry is the behaviour under test: its clock, not this loop, decides when
            assertTrue(System.nanoTime() < deadline, "the lobby never expired");
            Thread.sleep(20);
        }
        try (java.net.ServerSocket again = new java.net.ServerSocket()) {
            again.setReuseAddress(true);
            again.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), id.port())); // the port is free
        }
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> TcpRendezvous.join(id, 2, 0, TIMEOUT));
        assertEquals(Result.REMOTE_ERROR, e.result());
        assertTrue(e.getMessage().contains("lobby"), e.getMessage());
        e = assertThrows(FlexLinkException.class, () -> TcpRendezvous.join(id, 2, 1, Duration.ofMillis(300)));
        assertEquals(Result.REMOTE_ERROR, e.result());
    }

    private static boolean threadAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }

    /** A peer with the wrong secret is refused by the lobby itself. */
    @Test
    void aWrongSecretIsRefused() throws Exception {
        UniqueId id = TcpRendezvous.anyProcess(CONFIG);
        byte[] b = id.toBytes();
        b[20] ^= 1; // inside the secret
        UniqueId forged = UniqueId.fromBytes(b);
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> TcpRendezvous.join(forged, 2, 1, TIMEOUT));
        assertEquals(Result.REMOTE_ERROR, e.result());
        assertTrue(e.getMessage().contains("wrong secret"), e.getMessage());
        assertTrue(RendezvousLobby.isOpen(id), "a refused stranger does not close the lobby");
        Future<RankExchange> one = join(id, 2, 1);
        RankExchange zero = TcpRendezvous.join(id, 2, 0, TIMEOUT);
        List<RankExchange> ex = List.of(zero, one.get(30, TimeUnit.SECONDS));
        checkRound(ex, pool);
        zero.close();
        ex.get(1).close();
    }

    /** FLEXLINK_COMM_ID: the id names a fixed address, and rank 0 listens there only from its join. */
    @Test
    void aFixedCommIdIsBoundByRankZero() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        FlexLinkConfig fixed = FlexLinkConfig.builder().set(FlexLinkConfig.COMM_ID, "127.0.0.1:" + port).build()
                .conclude();
        UniqueId id = TcpRendezvous.anyProcess(fixed);
        assertEquals(UniqueId.RANK0_BINDS, id.flags());
        assertEquals(port, id.port());
        Future<RankExchange> one = join(id, 2, 1); // retries until rank 0 listens
        RankExchange zero = TcpRendezvous.join(id, 2, 0, fixed);
        List<RankExchange> ex = List.of(zero, one.get(30, TimeUnit.SECONDS));
        checkRound(ex, pool);
        zero.close();
        ex.get(1).close();
    }

    @Test
    void badCommIdsNameTheSetting() {
        for (String bad : List.of("localhost", "localhost:0", "localhost:70000", ":5000", "host:port")) {
            FlexLinkException e = assertThrows(FlexLinkException.class,
                    () -> FlexLinkConfig.builder().set(FlexLinkConfig.COMM_ID, bad).build().conclude(), bad);
            assertEquals(Result.INVALID_ARGUMENT, e.result());
            assertTrue(e.getMessage().contains("FLEXLINK_COMM_ID"), e.getMessage());
        }
        FlexLinkConfig any = FlexLinkConfig.builder().set(FlexLinkConfig.COMM_ID, "0.0.0.0:5000").build().conclude();
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> TcpRendezvous.anyProcess(any));
        assertEquals(Result.INVALID_ARGUMENT, e.result());
    }
}
