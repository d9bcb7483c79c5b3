package io.flexlink.matrix;

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
import io.flexlink.testing.PairwiseCases;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The correctness matrix on the host backend: collective × type × op × ranks × count × in-place ×
 * split, sampled all-pairs (seeded), every output element of every rank checked exactly against the
 * reference on random data with poisoned outputs. Exact checks also prove every rank bit-identical.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CorrectnessMatrixTest {
    static final long CHUNK = 4096;
    static final int[] RANKS = {1, 2, 3, 4, 8};
    /** Counts in units of the dimension; CHUNK_* resolve per type to chunk boundaries ± 1. */
    static final long[] COUNTS = {0, 1, 2, 7, 997, -1, -2, -3, -4, 65_537, 8L * 1024 * 1024 + 3};
    static final String[] SPLITS = {"primary", "pcie", "mixed"};
    static final DataType[] TYPES = DataType.values();
    static final ReduceOp[] OPS = ReduceOp.values();
    static final Collective[] COLLECTIVES = Collective.collectives().toArray(new Collective[0]);

    private HostBackend backend;

    @BeforeAll
    void open() {
        backend = new HostBackend(FlexLinkConfig.builder().build());
    }

    @AfterAll
    void shut() {
        backend.close();
    }

    static long count(long code, DataType type) {
        long ce = CHUNK / type.size();
        if (code == -1) {
            return ce - 1;
        }
        if (code == -2) {
            return ce;
        }
        if (code == -3) {
            return ce + 1;
        }
        if (code == -4) {
            return 3 * ce + 1;
        }
        return code;
    }

    static List<int[]> rows() {
        int[] sizes = {COLLECTIVES.length, TYPES.length, OPS.length, RANKS.length, COUNTS.length, 2, SPLITS.length};
        return PairwiseCases.generate(sizes, 20261129L);
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        int i = 0;
        for (int[] r : rows()) {
            out.add(Arguments.of(i++, COLLECTIVES[r[0]], TYPES[r[1]], OPS[r[2]], RANKS[r[3]], COUNTS[r[4]],
                    r[5] == 1, SPLITS[r[6]]));
        }
        return out.stream();
    }

    static FlexLinkConfig config(String split) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder()
                .set(FlexLinkConfig.CHUNK_BYTES, Long.toString(CHUNK))
                .set(FlexLinkConfig.SLOTS, "2")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0");
        switch (split) {
            case "primary": return b.set(FlexLinkConfig.PATHS, "primary").build();
            case "pcie": return b.set(FlexLinkConfig.PATHS, "pcie").build();
            default: return b.set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, "pcie=0.37").build();
        }
    }

    @ParameterizedTest(name = "[{0}] {1} {2} {3} ranks={4} count={5} inPlace={6} split={7}")
    @MethodSource("cases")
    void matrix(int index, Collective c, DataType type, ReduceOp op, int ranks, long countCode, boolean inPlace,
                String split) {
        long count = count(countCode, type);
        if (count > 1_000_000 && ranks == 8 && type.size() == 8) {
            count = count / 2 + 1; // keeps the largest case within memory on a 2-core CI machine
        }
        int[] devices = new int[ranks];
        for (int r = 0; r < ranks; r++) {
            devices[r] = r;
        }
        int root = ranks - 1 - index % ranks;
        FlexLinkConfig config = config(split);
        Communicator[] comms = FlexLink.initAll(backend, config, devices);
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            CollectiveHarness.Outcome o = h.run(c, type, op, count, root, inPlace, 1000L + index);
            assertEquals(0, o.wrong, o.toString());
            // the split happened as configured: bytes per path, over every rank
            long total = (long) ranks * count * type.size();
            long align = Math.max(1, 256 / type.size());
            long auxPerRank = split.equals("pcie") ? count : split.equals("mixed")
                    ? Math.min(count, (long) Math.floor(count * 0.37 / align) * align) : 0;
            assertEquals((long) ranks * auxPerRank * type.size(), o.bytes("pcie"), "bytes on pcie: " + o);
            assertEquals(total - (long) ranks * auxPerRank * type.size(), o.bytes("primary"), "bytes on primary: " + o);
        } finally {
            for (Communicator comm : comms) {
                comm.close();
            }
        }
    }

    @Test
    void sampleCoversEveryValueAndPair() {
        List<int[]> rows = rows();
        int[] sizes = {COLLECTIVES.length, TYPES.length, OPS.length, RANKS.length, COUNTS.length, 2, SPLITS.length};
        for (int i = 0; i < sizes.length; i++) {
            for (int j = i + 1; j < sizes.length; j++) {
                Set<Long> seen = new HashSet<>();
                for (int[] r : rows) {
                    seen.add((long) r[i] * 1000 + r[j]);
                }
                assertEquals(sizes[i] * sizes[j], seen.size(), "pairs of dimensions " + i + " and " + j);
            }
        }
        assertTrue(rows.size() < 400, "sample of " + rows.size() + " rows");
    }
}
