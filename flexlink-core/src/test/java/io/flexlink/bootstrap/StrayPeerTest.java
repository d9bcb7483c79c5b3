package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import io.flexlink.testing.Bounded;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A peer refused when rank 0 attaches (it claims another rank count) is refused, not lost: rank 0 must
 * not report it gone, which would abort the communicator the real ranks then make.
 */
class StrayPeerTest {
    @Test
    void aPeerRefusedAtAttachIsNotReportedLost() throws Exception {
        UniqueId id = TcpRendezvous.listen(InetAddress.getLoopbackAddress(), 0, FlexLinkConfig.builder().build());
        Duration t = Duration.ofSeconds(30);
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            // a process of the same job that thinks there are 3 ranks, admitted before rank 0 attaches
            RankExchange stray = TcpRendezvous.join(id, 3, 1, t); // returns once rank 0's door admitted it
            RendezvousServer server = (RendezvousServer) TcpRendezvous.join(id, 2, 0, t); // refuses the stray
            List<String> heard = new CopyOnWriteArrayList<>();
            server.onPeerLost((r, why) -> heard.add(r + ": " + why));
            Future<RankExchange> real = pool.submit(() -> TcpRendezvous.join(id, 2, 1, t));
            Future<byte[][]> peerRound = pool.submit(() -> real.get().allGather(new byte[] {1}));
            assertArrayEquals(new byte[][] {{0}, {1}}, server.allGather(new byte[] {0}));
            assertArrayEquals(new byte[][] {{0}, {1}}, peerRound.get());
            // the refused connection's reader ends on its own time: give a wrong report the chance to show
            assertFalse(Bounded.await(() -> !server.lostRanks().isEmpty() || !heard.isEmpty(),
                    Duration.ofMillis(500)), () -> "reported lost: " + server.lostRanks() + " " + heard);
            assertEquals(Map.of(), server.lostRanks(), "nobody lost");
            server.close();
            real.get().close();
            stray.close();
        } finally {
            pool.shutdownNow();
        }
    }
}
