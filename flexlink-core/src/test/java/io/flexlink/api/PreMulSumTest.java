package io.flexlink.api;

import static io.flexlink.api.PreMulSumData.EXACT;
import static io.flexlink.api.PreMulSumData.ROUNDING;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.PreMulSum;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.FloatFormats;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
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
            Ranks rs = new Ranks(backend, config, ranks);
            for (DataType type : DataType.values()) {
                for (int pattern : new int[] {ROUNDING, EXACT}) {
                    double value = pattern == EXACT ? PreMulSumData.exactScalar(type) : -2.7;
                    PreMulSum[] ops = new PreMulSum[ranks];
                    for (int r = 0; r < ranks; r++) {
                        ops[r] = rs.comms[r].createPreMulSum(value, type);
                    }
                    long bits = FloatFormats.fromDouble(type, value);
                    for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.REDUCE_SCATTER,
                            Collective.REDUCE}) {
                        for (boolean inPlace : new boolean[] {false, true}) {
                            if (c != Collective.REDUCE || !inPlace) {
                                rs.runAndCheck(c, type, pattern, ops, bits, inPlace, 11 + pattern);
                            }
                        }
                    }
                    for (PreMulSum op : ops) {
                        op.close();
                    }
                }
            }
            assertPaths(rs, shares);
            rs.close();
        }
    }

    /** The device scalar is read when each call runs: the value written between two calls is the one used. */
    @ParameterizedTest(name = "{0} ranks, {1}")
    @CsvSource({"1, primary", "2, pcie=0.5", "3, primary", "3, pcie=1", "2, pcie-only"})
    void deviceScalarIsReadWhenTheCallRuns(int ranks, String shares) {
        FlexLinkConfig config = config(shares);
        try (HostBackend backend = new HostBackend(config)) {
            Ranks rs = new Ranks(backend, config, ranks);
            for (DataType type : DataType.values()) {
                PreMulSum[] ops = new PreMulSum[ranks];
                DeviceMemory[] scalars = new DeviceMemory[ranks];
                for (int r = 0; r < ranks; r++) {
                    scalars[r] = backend.allocate(r, 8);
                    ops[r] = rs.comms[r].createPreMulSumOnDevice(scalars[r].address(), type);
                }
                long previous = -1;
                for (double value : new double[] {-2.7, 0.3, 5}) {
                    long bits = FloatFormats.fromDouble(type, value);
                    if (bits == previous) {
                        continue; // a value the type cannot tell from the last one proves nothing
                    }
                    previous = bits;
                    for (int r = 0; r < ranks; r++) {
                        ByteBuffer b = PreMulSumData.buffer(1, type);
                        PreMulSumData.put(b, type, 0, bits);
                        backend.upload(scalars[r].address(), b);
                    }
                    rs.runAndCheck(Collective.ALL_REDUCE, type, ROUNDING, ops, bits, false, 5);
                    rs.runAndCheck(Collective.REDUCE_SCATTER, type, ROUNDING, ops, bits, true, 6);
                    rs.runAndCheck(Collective.REDUCE, type, ROUNDING, ops, bits, false, 7);
                }
                for (int r = 0; r < ranks; r++) {
                    ops[r].close();
                    scalars[r].close();
                }
            }
            assertPaths(rs, shares);
            rs.close();
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
                Ranks rs = new Ranks(backend, config, ranks);
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
            }
        }
    }

    /** The calls really ran where the configuration says: the PCIe path carried bytes exactly when it has a share. */
    static void assertPaths(Ranks rs, String shares) {
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

    /** The ranks of one communicator on the host backend, with buffers for every collective of {@link #N}. */
    static final class Ranks {
        final HostBackend backend;
        final int n;
        final Communicator[] comms;
        final RuntimeStream[] streams;
        final DeviceMemory[] send;
        final DeviceMemory[] recv;
        final DeviceMemory[] recv2;

        Ranks(HostBackend backend, FlexLinkConfig config, int n) {
            this.backend = backend;
            this.n = n;
            comms = FlexLink.initAll(backend, config, PreMulSumData.all(n));
            streams = new RuntimeStream[n];
            send = new DeviceMemory[n];
            recv = new DeviceMemory[n];
            recv2 = new DeviceMemory[n];
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                send[r] = backend.allocate(r, 8L * N * n);
                recv[r] = backend.allocate(r, 8L * N * n);
                recv2[r] = backend.allocate(r, 8L * N * n);
            }
        }

        /** Every rank's input: {@code elements} per rank ({@code N * n} for ReduceScatter). */
        void upload(DataType type, int pattern, long seed, long elements) {
            for (int r = 0; r < n; r++) {
                ByteBuffer b = PreMulSumData.buffer(elements, type);
                for (long i = 0; i < elements; i++) {
                    PreMulSumData.put(b, type, i, PreMulSumData.input(type, pattern, n, r, i, seed));
                }
                backend.upload(send[r].address(), b);
            }
        }

        void poison(long elements) {
            for (int r = 0; r < n; r++) {
                backend.fill(recv[r].address(), 8L * N * n, (byte) 0xA5);
                backend.fill(recv2[r].address(), 8L * N * n, (byte) 0xA5);
            }
        }

        /** One call on every rank in a group, then every element of every written output checked. */
        void runAndCheck(Collective c, DataType type, int pattern, PreMulSum[] ops, long scalarBits, boolean inPlace,
                         long seed) {
            long elements = c == Collective.REDUCE_SCATTER ? (long) N * n : N;
            upload(type, pattern, seed, elements);
            poison(elements);
            int root = n - 1;
            FlexLink.groupStart();
            for (int r = 0; r < n; r++) {
                long s = send[r].address();
                long d = inPlace ? s : recv[r].address();
                switch (c) {
                    case ALL_REDUCE: comms[r].allReduce(s, d, N, type, ops[r], streams[r]); break;
                    case REDUCE_SCATTER: comms[r].reduceScatter(s, inPlace ? s + (long) r * N * type.size() : d, N,
                            type, ops[r], streams[r]); break;
                    default: comms[r].reduce(s, d, N, type, ops[r], root, streams[r]);
                }
            }
            FlexLink.groupEnd();
            check(c, type, pattern, seed, scalarBits, inPlace ? send : recv, inPlace && c == Collective.REDUCE_SCATTER
                    ? N : 0);
        }

        /**
         * Every element each rank's output must hold; {@code rankStride} elements per rank offset the output
         * (an in-place ReduceScatter's slice of its input).
         */
        void check(Collective c, DataType type, int pattern, long seed, long scalarBits, DeviceMemory[] out,
                   long rankStride) {
            int[] all = PreMulSumData.all(n);
            for (int r = 0; r < n; r++) {
                streams[r].synchronize();
                if (c == Collective.REDUCE && r != n - 1) {
                    continue; // written on the root only
                }
                ByteBuffer got = PreMulSumData.buffer(N, type);
                backend.download(got, out[r].address() + r * rankStride * type.size());
                long offset = c == Collective.REDUCE_SCATTER ? (long) r * N : 0;
                for (long i = 0; i < N; i++) {
                    long want = PreMulSumData.expected(type, pattern, n, offset + i, seed, scalarBits, all);
                    long have = PreMulSumData.get(got, type, i);
                    if (want != have) {
                        assertEquals(Long.toHexString(want), Long.toHexString(have), c + " " + type + " pattern "
                                + pattern + ", " + n + " ranks, rank " + r + " element " + i + " (scalar bits 0x"
                                + Long.toHexString(scalarBits) + ")");
                    }
                }
            }
        }

        /** Bytes the path {@code name} carried on rank 0 so far (0 when it is not in use). */
        long pathBytes(String name) {
            for (io.flexlink.CommStats.PathTotals t : comms[0].stats().paths()) {
                if (t.path().equals(name)) {
                    return t.bytes();
                }
            }
            return 0;
        }

        void close() {
            for (int r = 0; r < n; r++) {
                comms[r].close();
                streams[r].close();
                send[r].close();
                recv[r].close();
                recv2[r].close();
            }
            assertEquals(0, backend.liveStreams());
        }
    }
}
