package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.FloatFormats;
import io.flexlink.runtime.host.HostBackend;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every rank gets the same bits from an AllReduce of general floating-point data, where the result does
 * depend on the order of the additions (the correctness matrix uses data whose results do not, so it
 * cannot see a rank that reduced in another order). Each element is reduced once, by its owner, and the
 * owner's result is what every rank receives.
 */
class RankIdentityTest {
    private static final int N = 40_000;

    @ParameterizedTest(name = "{0} {1} over {2} ranks, shares {3}")
    @CsvSource({
        "FLOAT32, SUM, 3, pcie=0.5",
        "FLOAT32, AVG, 4, pcie=0.5",
        "FLOAT64, SUM, 3, pcie=1",
        "BFLOAT16, SUM, 4, pcie=0.3",
        "FLOAT16, AVG, 3, primary",
        "FLOAT32, PROD, 3, pcie=0.5",
    })
    void everyRankGetsTheSameBits(DataType type, ReduceOp op, int n, String shares) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder().set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off");
        FlexLinkConfig config = (shares.equals("primary") ? b.set(FlexLinkConfig.PATHS, "primary")
                : b.set(FlexLinkConfig.SHARE, shares)).build();
        int sz = type.size();
        Random random = new Random(99L * n + op.ordinal());
        try (HostBackend backend = new HostBackend(config)) {
            int[] devices = new int[n];
            for (int r = 0; r < n; r++) {
                devices[r] = r;
            }
            Communicator[] comms = FlexLink.initAll(backend, config, devices);
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] send = new DeviceMemory[n];
            DeviceMemory[] recv = new DeviceMemory[n];
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                send[r] = backend.allocate(r, (long) N * sz);
                recv[r] = backend.allocate(r, (long) N * sz);
                ByteBuffer host = ByteBuffer.allocateDirect(N * sz).order(ByteOrder.nativeOrder());
                for (int i = 0; i < N; i++) {
                    // wide dynamic range, both signs: sums of these round differently in each order
                    double v = random.nextGaussian() * Math.scalb(1.0, random.nextInt(12) - 6);
                    put(host, sz, i, FloatFormats.fromDouble(type, op == ReduceOp.PROD ? 1 + v / 64 : v));
                }
                backend.upload(send[r].address(), host);
                // a different poison on every rank: an output nobody wrote cannot look identical across ranks
                backend.fill(recv[r].address(), (long) N * sz, (byte) (0x5A + 17 * r));
            }
            long[] before = io.flexlink.testing.Paths.bytes(comms[0]);
            FlexLink.groupStart();
            for (int r = 0; r < n; r++) {
                comms[r].allReduce(send[r], recv[r], N, type, op, streams[r]);
            }
            FlexLink.groupEnd();
            ByteBuffer first = null;
            for (int r = 0; r < n; r++) {
                streams[r].synchronize();
                ByteBuffer out = ByteBuffer.allocateDirect(N * sz).order(ByteOrder.nativeOrder());
                backend.download(out, recv[r].address());
                if (first == null) {
                    first = out;
                } else {
                    int at = first.mismatch(out);
                    assertEquals(-1, at, "rank " + r + " differs from rank 0 at byte " + at);
                }
            }
            long[] after = io.flexlink.testing.Paths.bytes(comms[0]);
            java.util.List<String> names = io.flexlink.testing.Paths.names(comms[0]);
            if (!shares.equals("primary")) {
                int pcie = names.indexOf("pcie");
                org.junit.jupiter.api.Assertions.assertTrue(after[pcie] > before[pcie], "the pcie path carried part of"
                        + " the call: " + names + " " + java.util.Arrays.toString(after));
            }
            for (int r = 0; r < n; r++) {
                comms[r].close();
                streams[r].close();
                send[r].close();
                recv[r].close();
            }
        }
    }

    private static void put(ByteBuffer b, int size, int i, long bits) {
        switch (size) {
            case 2: b.putShort(2 * i, (short) bits); break;
            case 4: b.putInt(4 * i, (int) bits); break;
            default: b.putLong(8 * i, bits);
        }
    }
}
