package io.flexlink.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.RankExchange;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Splitting an exchange into subgroups with a fresh rendezvous each (the piece a hierarchical communicator
 * and a later CommSplit build on): members ordered by key, then rank; a negative color joins none; the
 * subgroups' rounds are independent of each other and of the parent's.
 */
class SubgroupsTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.INIT_TIMEOUT, "20s")
            .build();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private List<RankExchange> parents(boolean tcp, int n) throws Exception {
        UniqueId id = tcp ? TcpRendezvous.listen(InetAddress.getLoopbackAddress(), 0, CONFIG) : UniqueId.random();
        List<Future<RankExchange>> fs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            fs.add(pool.submit(() -> tcp ? TcpRendezvous.join(id, n, rank, TIMEOUT)
                    : InProcessRendezvous.join(id.token(), n, rank, TIMEOUT)));
        }
        List<RankExchange> out = new ArrayList<>();
        for (Future<RankExchange> f : fs) {
            out.add(f.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    @ParameterizedTest(name = "over TCP: {0}")
    @ValueSource(booleans = {false, true})
    void ranksOfAColorFormAGroupOrderedByKey(boolean tcp) throws Exception {
        int n = 6;
        List<RankExchange> parent = parents(tcp, n);
        int[] colors = {0, 1, 0, 1, Subgroups.NO_COLOR, 0};
        int[] keys = {5, 0, 1, 0, 0, 1};
        List<Future<Subgroups.Subgroup>> fs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            fs.add(pool.submit(() -> Subgroups.split(parent.get(rank), rank, colors[rank], keys[rank],
                    InetAddress.getLoopbackAddress(), CONFIG)));
        }
        Subgroups.Subgroup[] g = new Subgroups.Subgroup[n];
        for (int r = 0; r < n; r++) {
            g[r] = fs.get(r).get(30, TimeUnit.SECONDS);
        }
        assertNull(g[4], "no color, no group");
        assertArrayEquals(new int[] {2, 5, 0}, g[0].members(), "key 1 (rank 2), key 1 (rank 5), key 5");
        assertEquals(2, g[0].rank());
        assertEquals(0, g[2].rank());
        assertArrayEquals(new int[] {1, 3}, g[3].members());
        assertEquals(tcp, g[1].exchange().crossProcess(), "processes meet over TCP, threads in process");
        // the groups' rounds run at the same time, each on its own rendezvous, in subgroup-rank order
        List<Future<byte[][]>> rounds = new ArrayList<>();
        List<Subgroups.Subgroup> whose = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            if (g[r] != null) {
                Subgroups.Subgroup s = g[r];
                int rank = r;
                whose.add(s);
                rounds.add(pool.submit(() -> s.exchange().allGather(new byte[] {(byte) rank})));
            }
        }
        for (int i = 0; i < rounds.size(); i++) {
            byte[][] all = rounds.get(i).get(30, TimeUnit.SECONDS);
            int[] members = whose.get(i).members();
            assertEquals(members.length, all.length);
            for (int k = 0; k < members.length; k++) {
                assertEquals(members[k], all[k][0], "subgroup rank " + k + " is parent rank " + members[k]);
            }
        }
        for (Subgroups.Subgroup s : g) {
            if (s != null) {
                s.exchange().close();
            }
        }
        parent.forEach(RankExchange::close);
    }
}
