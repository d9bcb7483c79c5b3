package io.flexlink.testing;

import static io.flexlink.testing.PreMulSumData.EXACT;
import static io.flexlink.testing.PreMulSumData.ROUNDING;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.PreMulSum;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.ByteBuffer;

/**
 * The ranks of one communicator on any backend (the host backend in CI, CUDA in the GPU tests), with buffers for
 * every reducing collective of {@code n} elements per rank: inputs from {@link PreMulSumData}, outputs poisoned,
 * every element of every output compared bit for bit with the Java reference.
 */
public final class PreMulSumRanks implements AutoCloseable {
    public final Backend backend;
    public final int n;
    /** Elements per rank of each call (ReduceScatter's input holds {@code n} times as many). */
    public final int count;
    public final Communicator[] comms;
    public final RuntimeStream[] streams;
    public final DeviceMemory[] send;
    public final DeviceMemory[] recv;
    public final DeviceMemory[] recv2;
    /** One group for every rank's call (one thread drives them); false: one call after another, ungrouped. */
    private final boolean grouped;

    public PreMulSumRanks(Backend backend, FlexLinkConfig config, int[] devices, int count) {
        this(backend, FlexLink.initAll(backend, config, devices), devices, count, true);
    }

    /**
     * Over communicators made elsewhere, on {@code devices}; {@code grouped} false for those whose collectives
     * cannot be grouped (multi-node ones), whose calls one thread may still make one after another.
     */
    public PreMulSumRanks(Backend backend, Communicator[] comms, int[] devices, int count, boolean grouped) {
        this.backend = backend;
        this.n = devices.length;
        this.count = count;
        this.comms = comms;
        this.grouped = grouped;
        streams = new RuntimeStream[n];
        send = new DeviceMemory[n];
        recv = new DeviceMemory[n];
        recv2 = new DeviceMemory[n];
        for (int r = 0; r < n; r++) {
            int d = devices[r];
            streams[r] = backend.createStream(d, "user" + r);
            send[r] = backend.allocate(d, 8L * count * n);
            recv[r] = backend.allocate(d, 8L * count * n);
            recv2[r] = backend.allocate(d, 8L * count * n);
        }
    }

    /** Ranks on devices {@code 0 .. n-1}. */
    public PreMulSumRanks(Backend backend, FlexLinkConfig config, int n, int count) {
        this(backend, config, PreMulSumData.all(n), count);
    }


    /** Every rank's input: {@code elements} per rank ({@code count * n} for ReduceScatter). */
    public void upload(DataType type, int pattern, long seed, long elements) {
        for (int r = 0; r < n; r++) {
            ByteBuffer b = PreMulSumData.buffer(elements, type);
            for (long i = 0; i < elements; i++) {
                PreMulSumData.put(b, type, i, PreMulSumData.input(type, pattern, n, r, i, seed));
            }
            backend.upload(send[r].address(), b);
        }
    }

    public void poison(long elements) {
        for (int r = 0; r < n; r++) {
            backend.fill(recv[r].address(), 8L * count * n, (byte) 0xA5);
            backend.fill(recv2[r].address(), 8L * count * n, (byte) 0xA5);
        }
    }

    /** One call on every rank in a group, then every element of every written output checked. */
    public void runAndCheck(Collective c, DataType type, int pattern, PreMulSum[] ops, long scalarBits, boolean inPlace,
                            long seed) {
        long elements = c == Collective.REDUCE_SCATTER ? (long) count * n : count;
        upload(type, pattern, seed, elements);
        poison(elements);
        int root = n - 1;
        if (grouped) {
            FlexLink.groupStart();
        }
        for (int r = 0; r < n; r++) {
            long s = send[r].address();
            long d = inPlace ? s : recv[r].address();
            switch (c) {
                case ALL_REDUCE: comms[r].allReduce(s, d, count, type, ops[r], streams[r]); break;
                case REDUCE_SCATTER: comms[r].reduceScatter(s, inPlace ? s + (long) r * count * type.size() : d, count,
                        type, ops[r], streams[r]); break;
                default: comms[r].reduce(s, d, count, type, ops[r], root, streams[r]);
            }
        }
        if (grouped) {
            FlexLink.groupEnd();
        }
        check(c, type, pattern, seed, scalarBits, inPlace ? send : recv, inPlace && c == Collective.REDUCE_SCATTER
                ? count : 0);
    }

    /**
     * Every element each rank's output must hold; {@code rankStride} elements per rank offset the output
     * (an in-place ReduceScatter's slice of its input).
     */
    public void check(Collective c, DataType type, int pattern, long seed, long scalarBits, DeviceMemory[] out,
                      long rankStride) {
        int[] all = PreMulSumData.all(n);
        for (int r = 0; r < n; r++) {
            streams[r].synchronize();
            if (c == Collective.REDUCE && r != n - 1) {
                continue; // written on the root only
            }
            ByteBuffer got = PreMulSumData.buffer(count, type);
            backend.download(got, out[r].address() + r * rankStride * type.size());
            long offset = c == Collective.REDUCE_SCATTER ? (long) r * count : 0;
            for (long i = 0; i < count; i++) {
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

    /**
     * Every reducing collective (AllReduce and ReduceScatter in and out of place, Reduce to the last rank), every
     * type, with a host scalar: -2.7 rounded to the type on {@link PreMulSumData#ROUNDING} data, the exact scalar
     * on {@link PreMulSumData#EXACT} data.
     */
    public void everyCollectiveTypeAndHostScalar() {
        for (DataType type : DataType.values()) {
            for (int pattern : new int[] {ROUNDING, EXACT}) {
                double value = pattern == EXACT ? PreMulSumData.exactScalar(type) : -2.7;
                PreMulSum[] ops = new PreMulSum[n];
                for (int r = 0; r < n; r++) {
                    ops[r] = comms[r].createPreMulSum(value, type);
                }
                long bits = FloatFormats.fromDouble(type, value);
                for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.REDUCE_SCATTER,
                        Collective.REDUCE}) {
                    for (boolean inPlace : new boolean[] {false, true}) {
                        if (c != Collective.REDUCE || !inPlace) {
                            runAndCheck(c, type, pattern, ops, bits, inPlace, 11 + pattern);
                        }
                    }
                }
                for (PreMulSum op : ops) {
                    op.close();
                }
            }
        }
    }

    /**
     * A device scalar per rank, written between calls (-2.7, 0.3, 5 rounded to the type, each different from the
     * last): each call uses the value there when it runs, on AllReduce, in-place ReduceScatter and Reduce.
     */
    public void deviceScalarsChangedBetweenCalls() {
        for (DataType type : DataType.values()) {
            PreMulSum[] ops = new PreMulSum[n];
            DeviceMemory[] scalars = new DeviceMemory[n];
            for (int r = 0; r < n; r++) {
                scalars[r] = backend.allocate(comms[r].device(), 8);
                ops[r] = comms[r].createPreMulSumOnDevice(scalars[r].address(), type);
            }
            long previous = -1;
            for (double value : new double[] {-2.7, 0.3, 5}) {
                long bits = FloatFormats.fromDouble(type, value);
                if (bits == previous) {
                    continue; // a value the type cannot tell from the last one proves nothing
                }
                previous = bits;
                for (int r = 0; r < n; r++) {
                    ByteBuffer b = PreMulSumData.buffer(1, type);
                    PreMulSumData.put(b, type, 0, bits);
                    backend.upload(scalars[r].address(), b);
                }
                runAndCheck(Collective.ALL_REDUCE, type, ROUNDING, ops, bits, false, 5);
                runAndCheck(Collective.REDUCE_SCATTER, type, ROUNDING, ops, bits, true, 6);
                runAndCheck(Collective.REDUCE, type, ROUNDING, ops, bits, false, 7);
            }
            for (int r = 0; r < n; r++) {
                ops[r].close();
                scalars[r].close();
            }
        }
    }

    /** Bytes the path {@code name} carried on rank 0 so far (0 when it is not in use). */
    public long pathBytes(String name) {
        for (io.flexlink.CommStats.PathTotals t : comms[0].stats().paths()) {
            if (t.path().equals(name)) {
                return t.bytes();
            }
        }
        return 0;
    }

    @Override
    public void close() {
        for (int r = 0; r < n; r++) {
            comms[r].close();
            streams[r].close();
            send[r].close();
            recv[r].close();
            recv2[r].close();
        }
    }
}
