package io.flexlink.cuda.matrix;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;
import io.flexlink.verify.Expected;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The exhaustive differential matrix on the GPU: every collective × the 12 types × every operation that
 * applies × counts {1, 7, 2^18+3, 2^20+5, 2^22+3} × in place and out of place × {one rank with shares 0, a
 * fixed pcie=0.37 and the balancer; 2 and 4 ranks on GPU 0; every GPU where there are several}. Outputs are
 * poisoned first; every element of every rank is compared with the Java reference ({@link MatrixData}).
 * Inputs live on the device for the whole run and expected results are made once per type, so the run
 * takes minutes. Prints one line per case and a summary. Usage: {@code GpuMatrix [config-name ...]}.
 */
public final class GpuMatrix {
    static final long[] COUNTS = {1, 7, (1 << 18) + 3, (1 << 20) + 5, (1 << 22) + 3};
    private static final byte POISON = (byte) 0xA5;

    /** One way of making the communicators. */
    public record Config(String name, int[] devices, String paths, String share, String minSplit) {
        FlexLinkConfig config(Backend backend) {
            return FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, backend.name()).set(FlexLinkConfig.PATHS, paths)
                    .set(FlexLinkConfig.SHARE, share).set(FlexLinkConfig.MIN_SPLIT_BYTES, minSplit)
                    .set(FlexLinkConfig.TUNING_CACHE, "off").build();
        }
    }

    /** What a run found. */
    public record Summary(long cases, long failures, double seconds, List<String> failed) {
    }

    static List<Config> configs(int gpus) {
        List<Config> c = new ArrayList<>();
        c.add(new Config("1rank-share0", new int[] {0}, "primary,pcie", "pcie=0", "0"));
        c.add(new Config("1rank-pcie0.37", new int[] {0}, "primary,pcie", "pcie=0.37", "0"));
        c.add(new Config("1rank-balancer", new int[] {0}, "primary,pcie", "auto", "1M"));
        c.add(new Config("2ranks-gpu0", new int[] {0, 0}, "primary,pcie", "auto", "1M"));
        c.add(new Config("4ranks-gpu0", new int[] {0, 0, 0, 0}, "primary,pcie", "auto", "1M"));
        if (gpus > 1) {
            int[] all = new int[gpus];
            for (int d = 0; d < gpus; d++) {
                all[d] = d;
            }
            c.add(new Config(gpus + "gpus-balancer", all, "primary,pcie", "auto", "1M"));
            c.add(new Config(gpus + "gpus-pcie0.37", all, "primary,pcie", "pcie=0.37", "0"));
        }
        return c;
    }

    public static void main(String[] args) {
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda")
                .build())) {
            Summary s = run(backend, List.of(args), System.out);
            System.exit(s.failures() == 0 ? 0 : 1);
        }
    }

    /** Runs the configurations named in {@code only} (all when empty); one line per case on {@code out}. */
    public static Summary run(Backend backend, List<String> only, PrintStream out) {
        return run(backend, only, COUNTS, out);
    }

    /** The matrix with other counts (the host backend's check of the matrix itself uses small ones). */
    public static Summary run(Backend backend, List<String> only, long[] counts, PrintStream out) {
        long t0 = System.nanoTime();
        long cases = 0;
        List<String> failed = new ArrayList<>();
        for (Config cfg : configs(backend.deviceCount())) {
            if (!only.isEmpty() && !only.contains(cfg.name())) {
                continue;
            }
            try (Rig rig = new Rig(backend, cfg, counts[counts.length - 1])) {
                for (DataType type : DataType.values()) {
                    rig.prepare(type);
                    for (Collective c : Collective.collectives()) {
                        for (ReduceOp op : c.reduces() ? ReduceOp.values() : new ReduceOp[] {ReduceOp.SUM}) {
                            for (long count : counts) {
                                for (boolean inPlace : new boolean[] {false, true}) {
                                    cases++;
                                    String label = String.format(Locale.ROOT, "%s %s %s %s %d %s", cfg.name(), c,
                                            type, c.reduces() ? op : "-", count, inPlace ? "in-place" : "out-of-place");
                                    String bad = rig.run(c, type, op, count, inPlace, (int) (cases % cfg.devices().length));
                                    if (bad != null) {
                                        failed.add(label + ": " + bad);
                                    }
                                    out.println(label + ": " + (bad == null ? "OK" : "WRONG " + bad));
                                }
                            }
                        }
                    }
                }
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        out.printf(Locale.ROOT, "# GPU matrix: %d cases, %d failures, %.1f s%n", cases, failed.size(), seconds);
        return new Summary(cases, failed.size(), seconds, failed);
    }

    /** The communicators, streams and buffers of one configuration, reused by all of its cases. */
    static final class Rig implements AutoCloseable {
        final Backend backend;
        final Config cfg;
        final int n;
        final Communicator[] comms;
        final RuntimeStream[] streams;
        /** Per rank, per profile: the input of the largest case, on the device for the whole type. */
        final DeviceMemory[][] inputs;
        final DeviceMemory[] out;
        final long maxElems;
        DataType type;
        ByteBuffer[][] hostInputs;
        ByteBuffer[] expected;
        ByteBuffer download;

        Rig(Backend backend, Config cfg, long maxCount) {
            this.backend = backend;
            this.cfg = cfg;
            this.n = cfg.devices().length;
            this.comms = FlexLink.initAll(backend, cfg.config(backend), cfg.devices());
            this.streams = new RuntimeStream[n];
            this.inputs = new DeviceMemory[n][3];
            this.out = new DeviceMemory[n];
            this.maxElems = n * maxCount;
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(cfg.devices()[r], "matrix.r" + r);
                for (int p = 0; p < 3; p++) {
                    inputs[r][p] = backend.allocate(cfg.devices()[r], maxElems * 8);
                }
                out[r] = backend.allocate(cfg.devices()[r], maxElems * 8);
            }
            download = MatrixData.buffer(maxElems * 8);
        }

        /** Uploads every rank's inputs of {@code t} and computes the expected reductions once. */
        void prepare(DataType t) {
            type = t;
            hostInputs = new ByteBuffer[n][3];
            for (int r = 0; r < n; r++) {
                for (int p = 0; p < 3; p++) {
                    hostInputs[r][p] = MatrixData.input(p, t, n, r, maxElems);
                    backend.upload(inputs[r][p].address(), hostInputs[r][p].duplicate());
                }
            }
            expected = new ByteBuffer[ReduceOp.values().length];
            for (ReduceOp op : ReduceOp.values()) {
                expected[op.ordinal()] = MatrixData.reduced(t, op, n, maxElems);
            }
        }

        /** One case on every rank; null when every element of every rank is right, else what was wrong. */
        String run(Collective c, DataType t, ReduceOp op, long count, boolean inPlace, int root) {
            int sz = t.size();
            int profile = MatrixData.profile(op, c.reduces());
            long inElems = Expected.inputCount(c, count, n);
            long outElems = Expected.outputCount(c, count, n);
            long[] send = new long[n];
            long[] recv = new long[n];
            for (int r = 0; r < n; r++) {
                long base = out[r].address();
                backend.fill(base, Math.max(inElems, outElems) * sz, POISON);
                // in place as NCCL defines it; a non-root Gather or Scatter has one buffer only
                boolean alone = (c == Collective.GATHER || c == Collective.SCATTER) && r != root;
                if (inPlace && !alone) {
                    boolean inBlock = c == Collective.ALL_GATHER || c == Collective.GATHER;
                    boolean outBlock = c == Collective.REDUCE_SCATTER || c == Collective.SCATTER;
                    send[r] = inBlock ? base + r * count * sz : base;
                    recv[r] = outBlock ? base + r * count * sz : base;
                    ByteBuffer in = hostInputs[r][profile].duplicate().position(0).limit((int) (inElems * sz));
                    backend.upload(send[r], in);
                } else {
                    send[r] = inputs[r][profile].address();
                    recv[r] = base;
                }
            }
            FlexLink.groupStart();
            try {
                for (int r = 0; r < n; r++) {
                    CollectiveHarness.enqueue(c, comms[r], send[r], recv[r], count, t, op, root, streams[r]);
                }
            } finally {
                FlexLink.groupEnd();
            }
            for (RuntimeStream s : streams) {
                s.synchronize();
            }
            for (int r = 0; r < n; r++) {
                String bad = check(c, t, op, count, inPlace, root, r, recv[r], outElems, sz, profile);
                if (bad != null) {
                    return bad;
                }
            }
            return null;
        }

        private String check(Collective c, DataType t, ReduceOp op, long count, boolean inPlace, int root, int r,
                             long recv, long outElems, int sz, int profile) {
            ByteBuffer got = download.duplicate().position(0).limit((int) (outElems * sz));
            backend.download(got.duplicate(), recv);
            switch (c) {
                case ALL_REDUCE:
                    return compare(r, got, 0, expected[op.ordinal()], 0, count, sz);
                case REDUCE:
                    if (r == root) {
                        return compare(r, got, 0, expected[op.ordinal()], 0, count, sz);
                    }
                    // the other ranks' buffers are left alone: the poison, or their input when in place
                    return inPlace ? compare(r, got, 0, hostInputs[r][profile], 0, count, sz) : poisoned(r, got, count, sz);
                case REDUCE_SCATTER:
                    return compare(r, got, 0, expected[op.ordinal()], r * count, count, sz);
                case BROADCAST:
                    return compare(r, got, 0, hostInputs[root][profile], 0, count, sz);
                case SCATTER:
                    return compare(r, got, 0, hostInputs[root][profile], r * count, count, sz);
                case ALL_TO_ALL:
                    for (int p = 0; p < n; p++) {
                        String bad = compare(r, got, p * count, hostInputs[p][profile], r * count, count, sz);
                        if (bad != null) {
                            return "block " + p + ": " + bad;
                        }
                    }
                    return null;
                case GATHER:
                    if (r != root) {
                        return poisoned(r, got, count, sz); // no receive buffer to write
                    }
                    // fall through: the root's blocks are every rank's input, as AllGather's
                default:
                    for (int p = 0; p < n; p++) {
                        String bad = compare(r, got, p * count, hostInputs[p][profile], 0, count, sz);
                        if (bad != null) {
                            return "block " + p + ": " + bad;
                        }
                    }
                    return null;
            }
        }

        private static String compare(int r, ByteBuffer got, long gotAt, ByteBuffer want, long wantAt, long count,
                                      int sz) {
            ByteBuffer g = got.duplicate().position((int) (gotAt * sz)).limit((int) ((gotAt + count) * sz));
            ByteBuffer w = want.duplicate().position((int) (wantAt * sz)).limit((int) ((wantAt + count) * sz));
            int at = g.mismatch(w);
            if (at < 0) {
                return null;
            }
            long wrong = 0;
            long unwritten = 0;
            for (long i = at / sz; i < count; i++) {
                long a = MatrixData.get(got, sz, gotAt + i);
                if (a != MatrixData.get(want, sz, wantAt + i)) {
                    wrong++;
                    unwritten += a == MatrixData.get(POISONED, sz, 0) ? 1 : 0;
                }
            }
            long i = at / sz;
            return String.format(Locale.ROOT, "rank %d: %d of %d wrong (%d still poisoned), first [%d] = 0x%x, "
                    + "expected 0x%x", r, wrong, count, unwritten, i, MatrixData.get(got, sz, gotAt + i),
                    MatrixData.get(want, sz, wantAt + i));
        }

        private static String poisoned(int r, ByteBuffer got, long count, int sz) {
            for (long i = 0; i < count * sz; i++) {
                if (got.get((int) i) != POISON) {
                    return "rank " + r + ": byte " + i + " of a buffer Reduce must not write was written";
                }
            }
            return null;
        }

        @Override
        public void close() {
            for (int r = 0; r < n; r++) {
                comms[r].close();
            }
            for (int r = 0; r < n; r++) {
                streams[r].close();
                for (DeviceMemory m : inputs[r]) {
                    m.close();
                }
                out[r].close();
            }
        }
    }

    /** Eight bytes of the poison, to tell an unwritten element of any size. */
    private static final ByteBuffer POISONED = MatrixData.buffer(8);

    static {
        for (int i = 0; i < 8; i++) {
            POISONED.put(i, POISON);
        }
    }

    private GpuMatrix() {
    }
}
