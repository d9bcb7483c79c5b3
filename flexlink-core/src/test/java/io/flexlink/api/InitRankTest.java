package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** One rank per thread from a shared unique id, like ncclCommInitRank. */
class InitRankTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder()
            .set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "20s").build();

    @Test
    void threeThreadsMakeOneCommunicator() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            UniqueId id = FlexLink.getUniqueId();
            assertEquals(id, UniqueId.fromBase64(id.toBase64()));
            assertEquals(UniqueId.BYTES, id.toBytes().length);
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<Future<Communicator>> futures = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                int rank = r;
                futures.add(pool.submit(() -> FlexLink.initRank(backend, CONFIG, 3, id, rank, rank)));
            }
            Communicator[] comms = new Communicator[3];
            for (int r = 0; r < 3; r++) {
                comms[r] = futures.get(r).get();
                assertEquals(r, comms[r].rank());
                assertEquals(3, comms[r].size());
            }
            pool.shutdown();
            try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
                for (Collective c : Collective.collectives()) {
                    CollectiveHarness.Outcome o = h.run(c, DataType.BFLOAT16, ReduceOp.MAX, 9_001, 2, false, 5);
                    assertEquals(0, o.wrong, c + ": " + o);
                }
            }
            for (Communicator c : comms) {
                c.close();
            }
        }
    }

    @Test
    void missingRanksAreNamedAfterTheTimeout() {
        FlexLinkConfig quick = FlexLinkConfig.builder().set(FlexLinkConfig.INIT_TIMEOUT, "300ms").build();
        try (HostBackend backend = new HostBackend(quick)) {
            FlexLinkException e = assertThrows(FlexLinkException.class,
                    () -> FlexLink.initRank(backend, quick, 3, FlexLink.getUniqueId(), 1, 0));
            assertEquals(Result.REMOTE_ERROR, e.result());
            assertTrue(e.getMessage().contains("[0, 2]"), e.getMessage());
        }
    }

    @Test
    void ranksConfiguredDifferentlyAreRefused() throws Exception {
        FlexLinkConfig other = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.5")
                .set(FlexLinkConfig.INIT_TIMEOUT, "20s").build();
        try (HostBackend backend = new HostBackend(CONFIG)) {
            UniqueId id = FlexLink.getUniqueId();
            for (FlexLinkException e : refusedOnBoth(() -> FlexLink.initRank(backend, CONFIG, 2, id, 0, 0),
                    () -> FlexLink.initRank(backend, other, 2, id, 1, 1))) {
                assertEquals(Result.INVALID_USAGE, e.result());
            }
        }
    }

    /**
     * Ranks whose primary transports are made differently (a tuned NCCL on one rank, say) are refused at creation,
     * on every rank, with both descriptions in the message: NCCL works its channels out from each rank's own config.
     */
    @Test
    void ranksWhosePrimaryIsMadeDifferentlyAreRefused() throws Exception {
        FlexLinkConfig quick = FlexLinkConfig.builder().set(FlexLinkConfig.INIT_TIMEOUT, "20s").build();
        try (HostBackend backend = new HostBackend(quick)) {
            io.flexlink.runtime.PrimaryTransport real = backend.primaryTransport();
            io.flexlink.runtime.Backend tuned = new io.flexlink.runtime.ForwardingBackend(backend) {
                @Override
                public io.flexlink.runtime.PrimaryTransport primaryTransport() {
                    return io.flexlink.testing.TransportAnswers.answering(real, "describe", "host ring (tuned)");
                }

                @Override
                public void close() {
                }
            };
            UniqueId id = FlexLink.getUniqueId();
            for (FlexLinkException cause : refusedOnBoth(() -> FlexLink.initRank(backend, quick, 2, id, 0, 0),
                    () -> FlexLink.initRank(tuned, quick, 2, id, 1, 1))) {
                assertEquals(Result.INVALID_USAGE, cause.result());
                String m = cause.getMessage();
                assertTrue(m.contains("configuration: rank 1 has") && m.contains("primary=host ring (tuned) but rank 0")
                        && m.contains("primary=" + real.describe() + "; every rank"), m);
                assertTrue(m.contains(" version=" + io.flexlink.Version.VERSION + " "), "builds compare versions: " + m);
            }
        }
    }

    /**
     * The host ring lays its staging out by its backend's settings, not the communicator's: ranks whose backends
     * are set differently (from their processes' environments) are refused, though their communicator settings
     * agree; they would map one staging area at different offsets.
     */
    @Test
    void hostRingsLaidOutDifferentlyAreRefused() throws Exception {
        FlexLinkConfig quick = FlexLinkConfig.builder().set(FlexLinkConfig.INIT_TIMEOUT, "20s").build();
        try (HostBackend a = new HostBackend(quick); HostBackend b = new HostBackend(quick.with(FlexLinkConfig.SLOTS,
                "7"))) {
            UniqueId id = FlexLink.getUniqueId();
            for (FlexLinkException cause : refusedOnBoth(() -> FlexLink.initRank(a, quick, 2, id, 0, 0),
                    () -> FlexLink.initRank(b, quick, 2, id, 1, 1))) {
                assertEquals(Result.INVALID_USAGE, cause.result());
                String m = cause.getMessage();
                assertTrue(m.contains("primary=" + b.primaryTransport().describe() + " but rank 0")
                        && m.contains("primary=" + a.primaryTransport().describe() + "; every rank"), m);
            }
        }
    }

    /** Runs the two ranks' creations at once; both must throw a FlexLinkException, which are returned. */
    private static List<FlexLinkException> refusedOnBoth(Callable<Communicator> rank0, Callable<Communicator> rank1) {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<FlexLinkException> out = new ArrayList<>();
            for (Future<Communicator> f : List.of(pool.submit(rank0), pool.submit(rank1))) {
                ExecutionException e = assertThrows(ExecutionException.class, f::get);
                out.add(assertInstanceOf(FlexLinkException.class, e.getCause()));
            }
            return out;
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void uniqueIdRejectsForeignBytes() {
        FlexLinkException e = assertThrows(FlexLinkException.class, () -> UniqueId.fromBytes(new byte[128]));
        assertEquals(Result.INVALID_ARGUMENT, e.result());
        assertThrows(FlexLinkException.class, () -> UniqueId.fromBytes(new byte[12]));
    }
}
