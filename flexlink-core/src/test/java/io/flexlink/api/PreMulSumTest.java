package io.flexlink.api;

import static io.flexlink.testing.PreMulSumData.EXACT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.PreMulSum;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.FloatFormats;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.PreMulSumRanks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * PreMulSum on the host backend: AllReduce (in and out of place), ReduceScatter (in and out of place) and
 * Reduce, every data type, a host scalar and a device scalar changed between calls, one to three ranks, on the
 * primary path alone, the PCIe path alone and split between them; outputs poisoned first, every element
 * compared bit for bit with {@link PreMulSumData}'s Java reference.
 */
class PreMulSumTest {
    private static final int N = 1777; // not a multiple of anything: the tails of every chunk and slice

    @ParameterizedTest(name = "{0} ranks, {1}")
    @CsvSource({"1, primary", "1, pcie=0.5", "2, primary", "2, pcie=1", "2, pcie=0.5", "3, pcie=0.4", "3, pcie=1"})
    void everyCollectiveTypeAndScalar(int ranks, String shares) {
        FlexLinkConfig config = config(shares);
        try (HostBackend backend = new HostBackend(config)) {
            PreMulSumRanks rs = new PreMulSumRanks(backend, config, ranks, N);
            rs.everyCollectiveTypeAndHostScalar();
            assertPaths(rs, shares);
            rs.close();
            assertEquals(0, backend.liveStreams());
        }
    }

    /** The device scalar is read when each call runs: the value written between two calls is the one used. */
    @ParameterizedTest(name = "{0} ranks, {1}")
    @CsvSource({"1, primary", "2, pcie=0.5", "3, primary", "3, pcie=1", "2, pcie-only"})
    void deviceScalarIsReadWhenTheCallRuns(int ranks, String shares) {
        FlexLinkConfig config = config(shares);
        try (HostBackend backend = new HostBackend(config)) {
            PreMulSumRanks rs = new PreMulSumRanks(backend, config, ranks, N);
            rs.deviceScalarsChangedBetweenCalls();
            assertPaths(rs, shares);
            rs.close();
            assertEquals(0, backend.liveStreams());
        }
    }

    /**
     * Two PreMulSum calls of one communicator in one group, with different scalars: each group position stages
     * its own scaled input (a group's calls are all staged before any runs), on every path.
     */
    @Test
    void twoCallsOfOneGroupKeepTheirOwnScalars() {
        // with a primary path a group's several calls of one communicator run whole on it; without one, split
        for (String shares : new String[] {"primary", "pcie-only"}) {
            FlexLinkConfig config = config(shares);
            try (HostBackend backend = new HostBackend(config)) {
                int ranks = 2;
                PreMulSumRanks rs = new PreMulSumRanks(backend, config, ranks, N);
                DataType type = DataType.FLOAT32;
                PreMulSum[] a = new PreMulSum[ranks];
                PreMulSum[] b = new PreMulSum[ranks];
                for (int r = 0; r < ranks; r++) {
                    a[r] = rs.comms[r].createPreMulSum(0.75, type);
                    b[r] = rs.comms[r].createPreMulSum(-3.0, type);
                }
                rs.upload(type, EXACT, 21, N);
                rs.poison(N);
                FlexLink.groupStart();
                for (int r = 0; r < ranks; r++) {
                    rs.comms[r].allReduce(rs.send[r].address(), rs.recv[r].address(), N, type, a[r], rs.streams[r]);
                    rs.comms[r].allReduce(rs.send[r].address(), rs.recv2[r].address(), N, type, b[r], rs.streams[r]);
                }
                FlexLink.groupEnd();
                rs.check(Collective.ALL_REDUCE, type, EXACT, 21, FloatFormats.fromDouble(type, 0.75), rs.recv, 0);
                rs.check(Collective.ALL_REDUCE, type, EXACT, 21, FloatFormats.fromDouble(type, -3.0), rs.recv2, 0);
                assertPaths(rs, shares);
                rs.close();
                assertEquals(0, backend.liveStreams());
            }
        }
    }

    /**
     * Back-to-back PreMulSums alternating between two streams per rank, each with its own scalar and output,
     * with and without the enqueue thread: a call re-stages its position's scratch and scalar word only after
     * the previous call there stopped reading them, whichever stream it came on.
     */
    @ParameterizedTest(name = "enqueue thread {0}")
    @CsvSource({"off", "on"})
    void consecutiveCallsOnTwoStreams(String enqueueThread) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off")
                .set(FlexLinkConfig.SHARE, "pcie=0.5").set(FlexLinkConfig.ENQUEUE_THREAD, enqueueThread).build();
        DataType type = DataType.FLOAT32;
        double[] scalars = {0.75, -3, 0.5, 2, -0.25, 1.5};
        int ranks = 2;
        try (HostBackend backend = new HostBackend(config)) {
            PreMulSumRanks rs = new PreMulSumRanks(backend, config, ranks, N);
            io.flexlink.runtime.RuntimeStream[] other = new io.flexlink.runtime.RuntimeStream[ranks];
            io.flexlink.runtime.DeviceMemory[][] out = new io.flexlink.runtime.DeviceMemory[scalars.length][ranks];
            PreMulSum[][] ops = new PreMulSum[scalars.length][ranks];
            for (int r = 0; r < ranks; r++) {
                other[r] = backend.createStream(r, "other" + r);
                for (int k = 0; k < scalars.length; k++) {
                    out[k][r] = backend.allocate(r, 4L * N);
                    ops[k][r] = rs.comms[r].createPreMulSum(scalars[k], type);
                }
            }
            rs.upload(type, EXACT, 31, N);
            for (int k = 0; k < scalars.length; k++) {
                FlexLink.groupStart();
                for (int r = 0; r < ranks; r++) {
                    rs.comms[r].allReduce(rs.send[r].address(), out[k][r].address(), N, type, ops[k][r],
                            k % 2 == 0 ? rs.streams[r] : other[r]);
                }
                FlexLink.groupEnd();
                for (int r = 0; r < ranks; r++) {
                    ops[k][r].close(); // as soon as the call returned: the queued work does not need it
                }
            }
            for (int r = 0; r < ranks; r++) {
                other[r].synchronize();
            }
            for (int k = 0; k < scalars.length; k++) {
                rs.check(Collective.ALL_REDUCE, type, EXACT, 31, FloatFormats.fromDouble(type, scalars[k]), out[k], 0);
            }
            for (int r = 0; r < ranks; r++) {
                other[r].close();
                for (int k = 0; k < scalars.length; k++) {
                    out[k][r].close();
                }
            }
            rs.close();
            assertEquals(0, backend.liveStreams());
        }
    }

    /** The calls really ran where the configuration says: the PCIe path carried bytes exactly when it has a share. */
    static void assertPaths(PreMulSumRanks rs, String shares) {
        long pcie = rs.pathBytes("pcie");
        org.junit.jupiter.api.Assertions.assertEquals(!shares.equals("primary"), pcie > 0, "pcie bytes " + pcie);
        if (shares.equals("pcie-only")) {
            assertEquals(0, rs.pathBytes("primary"), "the primary path carried bytes without a primary path");
        }
    }

    static FlexLinkConfig config(String shares) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder().set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off");
        return (shares.equals("primary") ? b.set(FlexLinkConfig.PATHS, "primary") : shares.equals("pcie-only")
                ? b.set(FlexLinkConfig.PATHS, "pcie") : b.set(FlexLinkConfig.SHARE, shares)).build();
    }
}
