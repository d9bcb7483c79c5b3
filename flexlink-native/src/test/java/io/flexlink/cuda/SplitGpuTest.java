package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.facade.SplitProgram;
import io.flexlink.testing.CollectiveHarness;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Splits on a GPU: four ranks on GPU 0 (which NCCL refuses, so every child runs over its own PCIe path), split
 * by parity through the facade (one thread, a group, as an NCCL program does) and through the core (a thread
 * per rank), AllReduce and AllGather checked on every child.
 */
@Tag("gpu")
class SplitGpuTest {
    @Test
    void facadeSplitsFourRanksOnOneGpuByParity() {
        GpuTests.assumeCuda();
        SplitProgram.splitByParity(new int[] {0, 0, 0, 0}, 300_001);
    }

    @Test
    void coreSplitsFourRanksOnOneGpuByParity() throws Exception {
        try (CudaBackend backend = GpuTests.open()) {
            FlexLinkConfig config = FlexLinkConfig.fromEnvironment();
            Communicator[] world = FlexLink.initAll(backend, config, 0, 0, 0, 0);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<Optional<Communicator>>> fs = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                int rank = r;
                fs.add(pool.submit(() -> world[rank].split(rank % 2, rank)));
            }
            Communicator[][] kids = new Communicator[2][2];
            for (int r = 0; r < 4; r++) {
                Communicator c = fs.get(r).get(5, TimeUnit.MINUTES).orElseThrow(); // a hang guard only
                assertEquals(r / 2, c.rank());
                assertEquals(0, c.device());
                kids[r % 2][c.rank()] = c;
            }
            pool.shutdown();
            for (Communicator[] pair : kids) {
                try (CollectiveHarness h = new CollectiveHarness(backend, pair)) {
                    for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.ALL_GATHER}) {
                        CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, (1 << 20) + 3, 0,
                                false, 17);
                        assertEquals(0, o.wrong, c + ": " + o);
                        assertTrue(o.bytes("pcie") > 0, c + " over the child's PCIe path: " + o);
                    }
                }
                for (Communicator c : pair) {
                    c.close();
                }
            }
            for (Communicator c : world) {
                c.close();
            }
        }
    }
}
