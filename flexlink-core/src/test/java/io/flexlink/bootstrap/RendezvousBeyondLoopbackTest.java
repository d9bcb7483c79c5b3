package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * MASTER_ADDR naming an address of this machine other than loopback (a node's cluster address): rank 0
 * binds that address and no other, the ranks meet through it, and it keeps refusing a wrong secret there.
 */
class RendezvousBeyondLoopbackTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder()
            .set(FlexLinkConfig.INIT_TIMEOUT, "20s").environment(Map.of()).build();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<RankExchange> open = new ArrayList<>();

    @AfterEach
    void stop() {
        open.forEach(RankExchange::close);
        pool.shutdownNow();
    }

    /** An up IPv4 address of this machine that is not loopback (nor link-local), or null. */
    private static InetAddress clusterAddress() throws Exception {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    return a;
                }
            }
        }
        return null;
    }

    private static LaunchEnv env(int rank, int world, InetAddress master, int port) {
        return LaunchEnv.parse(new HashMap<>(Map.of("RANK", String.valueOf(rank), "WORLD_SIZE",
                String.valueOf(world), "MASTER_ADDR", master.getHostAddress(), "MASTER_PORT", String.valueOf(port))));
    }

    @Test
    void rankZeroBindsMasterAddrAloneTheRanksMeetThroughItAndAWrongSecretIsRefusedThere() throws Exception {
        InetAddress master = clusterAddress();
        Assumptions.assumeTrue(master != null, "this machine has no up non-loopback IPv4 address");
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, master)) {
            port = probe.getLocalPort();
        }
        RankExchange zero = TcpRendezvous.fromEnv(env(0, 3, master, port), CONFIG);
        open.add(zero);
        assertEquals(master, TcpRendezvous.localAddress(zero), "rank 0 advertises MASTER_ADDR to its subgroups");
        RankExchange one = pool.submit(() -> TcpRendezvous.fromEnv(env(1, 3, master, port), CONFIG))
                .get(30, TimeUnit.SECONDS);
        open.add(one);
        assertEquals(master, TcpRendezvous.localAddress(one), "rank 1 reached rank 0 through MASTER_ADDR");

        // the same communicator's id (generation 0 of this fresh port), its secret one bit off
        UniqueId id = env(2, 3, master, port).uniqueId(master.getAddress(), CONFIG.secret(),
                CONFIG.get(FlexLinkConfig.JOB_ID), 0);
        byte[] wrong = id.secret();
        wrong[0] ^= 1;
        FlexLinkException refused = assertThrows(FlexLinkException.class, () -> RendezvousClient.connect(
                new InetSocketAddress(master, port), master.getHostAddress() + ":" + port, id.tokenBytes(), wrong, 2, 3,
                Duration.ofSeconds(20)));
        assertEquals(Result.REMOTE_ERROR, refused.result());
        assertTrue(refused.getMessage().contains("wrong secret"), refused.getMessage());

        // bound to MASTER_ADDR, not every interface: loopback has nobody listening on the port
        assertThrows(ConnectException.class, () -> new Socket(InetAddress.getByName("127.0.0.1"), port).close(),
                "nothing may answer on 127.0.0.1:" + port);

        RankExchange two = pool.submit(() -> TcpRendezvous.fromEnv(env(2, 3, master, port), CONFIG))
                .get(30, TimeUnit.SECONDS);
        open.add(two);
        assertEquals(master, TcpRendezvous.localAddress(two));
        RankExchange[] ranks = {zero, one, two};
        List<Future<byte[][]>> rounds = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            byte[] mine = {(byte) (10 + r), (byte) r};
            RankExchange e = ranks[r];
            rounds.add(pool.submit(() -> e.allGather(mine)));
        }
        for (Future<byte[][]> f : rounds) {
            byte[][] all = f.get(30, TimeUnit.SECONDS);
            for (int r = 0; r < 3; r++) {
                assertArrayEquals(new byte[] {(byte) (10 + r), (byte) r}, all[r], "rank " + r + "'s bytes");
            }
        }
    }
}
