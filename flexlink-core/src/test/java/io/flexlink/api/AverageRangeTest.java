package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * AVG of large narrow floating-point values: every path divides each input before adding (as NCCL's
 * pre-multiplied average does), so a sum that would overflow FLOAT16 or saturate FP8 never forms and the
 * average comes out close to the exact one, on the primary path, the PCIe path and split between them.
 */
class AverageRangeTest {
    private static final int N = 6000;

    @ParameterizedTest(name = "{0} {1} ranks, shares {2}")
    @CsvSource({
        "FLOAT16, 3, primary",
        "FLOAT16, 3, pcie=1",
        "FLOAT16, 4, pcie=0.5",
        "BFLOAT16, 3, pcie=0.5",
        "FLOAT8E4M3, 8, primary",
        "FLOAT8E4M3, 8, pcie=1",
        "FLOAT8E5M2, 3, pcie=0.5",
    })
    void averageOfLargeValuesStaysInRange(DataType type, int n, String shares) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder().set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off");
        b = shares.equals("primary") ? b.set(FlexLinkConfig.PATHS, "primary")
                : b.set(FlexLinkConfig.SHARE, shares);
        FlexLinkConfig config = b.build();
        // the largest finite value over the rank count stays below the type's maximum: the average fits
        double max = FloatFormats.toDouble(type, type == DataType.FLOAT16 ? 0x7BFF : type == DataType.BFLOAT16
                ? 0x7F7F : type == DataType.FLOAT8E4M3 ? 0x7E : 0x7B);
        Random random = new Random(1234 + n);
        double[][] in = new double[n][N];
        try (HostBackend backend = new HostBackend(config)) {
            int[] devices = new int[n];
            for (int r = 0; r < n; r++) {
                devices[r] = r;
            }
            Communicator[] comms = FlexLink.initAll(backend, config, devices);
            RuntimeStream[] streams = new RuntimeStream[n];
            DeviceMemory[] buf = new DeviceMemory[n];
            int sz = type.size();
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user" + r);
                buf[r] = backend.allocate(r, (long) N * sz);
                ByteBuffer host = ByteBuffer.allocateDirect(N * sz).order(ByteOrder.nativeOrder());
                for (int i = 0; i < N; i++) {
                    long bits = FloatFormats.fromDouble(type, max * (0.5 + 0.5 * random.nextDouble()));
                    in[r][i] = FloatFormats.toDouble(type, bits);
                    put(host, sz, bits);
                }
                host.flip();
                backend.upload(buf[r].address(), host);
            }
            FlexLink.groupStart();
            for (int r = 0; r < n; r++) {
                comms[r].allReduce(buf[r], buf[r], N, type, ReduceOp.AVG, streams[r]);
            }
            FlexLink.groupEnd();
            // a few roundings in the type; a sum that overflowed (infinity) or saturated (FP8 clamps the
            // sum to the maximum, so the average comes out near max / n) is far outside
            double tolerance = 3 * Math.pow(2, -mantissaBits(type));
            double worst = 0;
            for (int r = 0; r < n; r++) {
                streams[r].synchronize();
                ByteBuffer host = ByteBuffer.allocateDirect(N * sz).order(ByteOrder.nativeOrder());
                backend.download(host, buf[r].address());
                for (int i = 0; i < N; i++) {
                    double exact = 0;
                    for (int q = 0; q < n; q++) {
                        exact += in[q][i];
                    }
                    exact /= n;
                    double got = FloatFormats.toDouble(type, get(host, sz, i));
                    assertTrue(Double.isFinite(got) && Math.abs(got - exact) <= tolerance * exact,
                            type + " rank " + r + " element " + i + ": " + got + ", exact " + exact);
                    worst = Math.max(worst, Math.abs(got - exact) / exact);
                }
            }
            System.out.printf("AVG %s, %d ranks, %s: worst relative error %.4f (tolerance %.4f)%n", type, n, shares,
                    worst, tolerance);
            for (int r = 0; r < n; r++) {
                comms[r].close();
                streams[r].close();
                buf[r].close();
            }
            assertEquals(0, backend.liveStreams());
        }
    }

    private static int mantissaBits(DataType type) {
        switch (type) {
            case FLOAT16: return 11;
            case BFLOAT16: return 8;
            case FLOAT8E4M3: return 4;
            default: return 3;
        }
    }

    private static void put(ByteBuffer b, int size, long bits) {
        if (size == 2) {
            b.putShort((short) bits);
        } else {
            b.put((byte) bits);
        }
    }

    private static long get(ByteBuffer b, int size, int i) {
        return size == 2 ? b.getShort(2 * i) & 0xFFFF : b.get(i) & 0xFF;
    }
}
