package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.comm.FlexCommunicator;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.testing.CollectiveHarness;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The correctness matrix on CUDA, cut to minutes: one rank split between NCCL and the PCIe path (both
 * strided-primary variants), and 2, 3, 4 ranks on one GPU over the PCIe path alone (NCCL refuses shared
 * devices). Every collective, a sample of types, operations and counts around chunk boundaries, in
 * place and not, checked element by element by {@link CollectiveHarness}.
 */
@Tag("gpu")
class CudaCollectivesGpuTest {
    static CudaBackend backend;

    @BeforeAll
    static void open() {
        backend = GpuTests.open();
    }

    @AfterAll
    static void close() {
        NcclComm.stridedDefault = NcclComm.STRIDED_BY_ROOTS;
        if (backend != null) {
            backend.close();
        }
    }

    /** (type, op, count in chunks of this type, extra elements, in place). */
    private record Case(DataType type, ReduceOp op, double chunks, long extra, boolean inPlace) {
        long count(long chunkBytes) {
            return Math.max(1, (long) (chunks * (chunkBytes / type.size())) + extra);
        }
    }

    static final List<Case> CASES = List.of(
            new Case(DataType.FLOAT32, ReduceOp.SUM, 0, 1, false),
            new Case(DataType.FLOAT32, ReduceOp.SUM, 1, 0, false),
            new Case(DataType.BFLOAT16, ReduceOp.AVG, 1, 1, true),
            new Case(DataType.INT8, ReduceOp.MAX, 3, -5, false),
            new Case(DataType.FLOAT64, ReduceOp.PROD, 0, 1000, true),
            new Case(DataType.FLOAT8E4M3, ReduceOp.MIN, 0.1, 3, false),
            new Case(DataType.INT64, ReduceOp.SUM, 2.5, 1, true),
            new Case(DataType.UINT32, ReduceOp.AVG, 0, 77, false),
            new Case(DataType.FLOAT16, ReduceOp.SUM, 4.3, 0, false));

    private static void matrix(FlexLinkConfig config, int[] devices, String what) {
        Communicator[] comms = FlexLink.initAll(backend, config, devices);
        List<String> failures = new ArrayList<>();
        long seed = 1;
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            for (Case k : CASES) {
                long count = k.count(config.chunkBytes());
                for (Collective c : Collective.collectives()) {
                    int root = devices.length - 1;
                    CollectiveHarness.Outcome o = h.run(c, k.type(), k.op(), count, root, k.inPlace(), seed++);
                    if (o.wrong != 0) {
                        failures.add(what + " " + c + " " + k + " count " + count + ": " + o);
                    }
                }
            }
        } finally {
            for (Communicator c : comms) {
                c.close();
            }
        }
        assertEquals(List.of(), failures);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void oneRankSplitBetweenNcclAndPcie(boolean stridedByRoots) {
        NcclComm.stridedDefault = stridedByRoots;
        FlexLinkConfig config = FlexLinkConfig.builder()
                .set(FlexLinkConfig.SHARE, "pcie=0.3")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "1M")
                .build();
        Communicator[] probe = FlexLink.initAll(backend, config, 0);
        List<String> paths = io.flexlink.testing.Paths.names(probe[0]);
        probe[0].close();
        assertEquals(List.of("primary", "pcie"), paths);
        matrix(config, new int[] {0}, "1 rank (strided by " + (stridedByRoots ? "roots" : "scratch") + ")");
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void severalRanksOnOneGpuOverPcie(int ranks) {
        FlexLinkConfig config = FlexLinkConfig.builder()
                .set(FlexLinkConfig.CHUNK_BYTES, "256K")
                .set(FlexLinkConfig.SLOTS, ranks == 3 ? "2" : "4")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .build();
        int[] devices = new int[ranks];
        Communicator[] probe = FlexLink.initAll(backend, config, devices);
        List<String> paths = io.flexlink.testing.Paths.names(probe[0]);
        for (Communicator c : probe) {
            c.close();
        }
        assertTrue(paths.get(0).equals("primary(off)") && paths.contains("pcie"), paths.toString());
        matrix(config, devices, ranks + " ranks on device 0");
    }
}
