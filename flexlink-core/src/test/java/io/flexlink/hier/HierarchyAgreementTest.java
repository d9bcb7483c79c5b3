package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.host.HostBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * Two emulated nodes of two ranks whose ranks disagree on what every node must share: each rank fails at creation
 * with INVALID_USAGE naming both sides, before the rails are made.
 */
class HierarchyAgreementTest {
    private static final FlexLinkConfig BASE = HierarchyThreadsTest.BASE.with(FlexLinkConfig.INIT_TIMEOUT, "20s");

    /** The messages of the four ranks' failures, rank r made on {@code backendOf(r)} with {@code configOf(r)}. */
    private static List<String> refusedOnEveryRank(IntFunction<Backend> backendOf, IntFunction<FlexLinkConfig> configOf)
            throws Exception {
        UniqueId id = FlexLink.getUniqueId();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Communicator>> fs = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                int rank = r;
                FlexLinkConfig c = configOf.apply(r).with(FlexLinkConfig.NODE_ID, r < 2 ? "a" : "b");
                fs.add(pool.submit(() -> FlexLink.initRank(backendOf.apply(rank), c, 4, id, rank, rank)));
            }
            List<String> out = new ArrayList<>();
            for (Future<Communicator> f : fs) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(60, TimeUnit.SECONDS));
                FlexLinkException cause = assertInstanceOf(FlexLinkException.class, e.getCause());
                assertEquals(Result.INVALID_USAGE, cause.result(), cause.getMessage());
                out.add(cause.getMessage());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void ranksThatCutAllReducesDifferentlyAreRefused() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            for (String m : refusedOnEveryRank(r -> backend,
                    r -> BASE.with(FlexLinkConfig.HIER_PIECE_BYTES, r == 3 ? "1M" : "32M"))) {
                assertTrue(m.contains("hier.pieceBytes=1048576") && m.contains("hier.pieceBytes=33554432"), m);
            }
        }
    }

    /**
     * Node b runs another backend (its CUDA loaded; node a's fell back to the host backend): the rails of the two
     * would be made by other rounds, so both nodes are refused before any.
     */
    @Test
    void nodesOnDifferentBackendsAreRefusedBeforeTheRails() throws Exception {
        try (HostBackend backend = new HostBackend(BASE)) {
            Backend other = new ForwardingBackend(backend) {
                @Override
                public String name() {
                    return "cuda";
                }

                @Override
                public void close() {
                    // the host backend is closed by the test
                }
            };
            for (String m : refusedOnEveryRank(r -> r < 2 ? backend : other, r -> BASE)) {
                assertTrue(m.contains("backend=host") && m.contains("backend=cuda"), m);
            }
        }
    }
}
