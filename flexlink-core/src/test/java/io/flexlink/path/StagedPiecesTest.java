package io.flexlink.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.testing.PathStreams;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The collectives that carry a piece per consumer (the reductions' contributions, AlltoAll, Scatter) move
 * pieces of an {@code (n - 1)}-th of a slot through the PCIe path: a whole slot at two ranks. Each test
 * records the widest row the path copies into the staging area (the send stream's {@code copyRows}) and
 * checks every element of the result.
 */
class StagedPiecesTest {
    private static final long SLOT = 64 << 10;

    private static FlexLinkConfig config() {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, "pcie").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "64K").set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    /** Runs {@code c} on {@code ranks} ranks (root 0); returns the widest piece rank 0's send stream staged. */
    private static long widestPiece(Collective c, int ranks, long count) {
        FlexLinkConfig config = config();
        try (HostBackend host = new HostBackend(config)) {
            PathStreams traced = new PathStreams(host, PathStreams.Mode.COUNT);
            AtomicLong widest = new AtomicLong();
            traced.listen((label, m, a) -> {
                if (label.startsWith("pcie.send.r0") && m.getName().equals("copyRows")) {
                    widest.accumulateAndGet((Long) a[4], Math::max);
                }
            });
            Communicator[] comms = FlexLink.initAll(traced, config, new int[ranks]);
            try (CollectiveHarness h = new CollectiveHarness(host, comms)) {
                CollectiveHarness.Outcome o = h.run(c, DataType.INT32, ReduceOp.SUM, count, 0, false, 7);
                assertEquals(0, o.wrong, c + " on " + ranks + " ranks: " + o);
                assertTrue(o.bytes("pcie") > 0, "the PCIe path carried it: " + o);
            } finally {
                for (Communicator comm : comms) {
                    comm.close();
                }
            }
            return widest.get();
        }
    }

    @Test
    void aTwoRankAllReduceStagesWholeSlots() {
        assertEquals(SLOT, widestPiece(Collective.ALL_REDUCE, 2, 200_000), "each item fills its slot");
    }

    @Test
    void aThreeRankReductionStagesHalfSlots() {
        assertEquals(SLOT / 2, widestPiece(Collective.ALL_REDUCE, 3, 200_000), "allreduce");
        assertEquals(SLOT / 2, widestPiece(Collective.REDUCE_SCATTER, 3, 70_000), "reducescatter");
    }

    @Test
    void anAlltoAllAndAScatterStageAPiecePerOtherRank() {
        assertEquals(SLOT / 3 / 256 * 256, widestPiece(Collective.ALL_TO_ALL, 4, 60_000),
                "four ranks: a third of the slot, aligned down");
        assertEquals(SLOT / 2 / 256 * 256, widestPiece(Collective.SCATTER, 3, 70_000), "three ranks");
    }
}
