package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where the PCIe path's bandwidth goes on 2 ranks of one GPU: the same 256 MB per direction moved by copy
 * patterns that add, one at a time, what the path does beyond the ceiling's two large copies (8M copies, a
 * stream per rank and direction, a ring of four host slots per rank, each read ordered after its write by
 * events as the path's flags order it), and then the path itself, out of place and in place (an in-place
 * AllGather has no copy of the rank's own block ahead of its receives). Every figure is the median of
 * repetitions timed by CUDA events, every stream held on a host counter until everything is enqueued; the
 * patterns run in rounds so that drift shows. The handshaken rings carry each side of the handshake by events or
 * by words that stream memory operations write and wait for, as the path's flags are, or by a mix (which side's
 * memory operation costs what); then the path at several staging geometries. Usage:
 * {@code PcieGapProbe [reps] [rounds]}.
 */
public final class PcieGapProbe {
    private static final long MB = 1 << 20;
    private static final long BYTES = 256 * MB;

    private PcieGapProbe() {
    }

    /** One copy on stream {@code stream}. */
    private record Copy(int stream, long dst, long src, long bytes) {
    }

    public static void main(String[] args) {
        int reps = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        CudaMeasurements.reps = reps;
        CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment());
        CudaMeasurements.backend = backend;
        try (DeviceMemory devA = backend.allocate(0, BYTES); DeviceMemory devB = backend.allocate(0, BYTES);
             PinnedMemory hostA = backend.allocatePinned(BYTES); PinnedMemory hostB = backend.allocatePinned(BYTES);
             PinnedMemory ring = backend.allocatePinned(128 * MB); PinnedMemory hostWords = backend.allocatePinned(MB);
             DeviceMemory deviceMemory = backend.allocate(0, MB); HostGate gate = new HostGate(backend)) {
            for (long w = 0; w < MB; w += 4) {
                hostWords.writeCounter(w, 0);
            }
            PinnedMemory deviceWords = new DeviceWords(deviceMemory);
            try (RuntimeStream s = backend.createStream(0, "probe.zero")) {
                s.copy(deviceMemory.address(), hostWords.deviceAddress(), MB);
                s.synchronize();
            }
            CudaMeasurements.randomize(devA.address(), BYTES, 1);
            long d2hDst = hostA.deviceAddress();
            long h2dSrc = hostB.deviceAddress();
            System.out.println("# PCIe gap probe on " + backend.topology().describe() + ", 256 MB per direction,"
                    + " median of " + reps + ", GB/s per direction");
            System.out.printf("%-64s %8s %8s%n", "pattern", "ms", "GB/s");
            for (int round = 0; round < rounds; round++) {
                System.out.println("# round " + (round + 1));
                Probe p = new Probe(backend, gate, reps);
                p.report("D2H alone, one copy", 1, List.of(new Copy(0, d2hDst, devA.address(), BYTES)));
                p.report("H2D alone, one copy", 1, List.of(new Copy(0, devB.address(), h2dSrc, BYTES)));
                p.report("ceiling: D2H + H2D, one copy each, 2 streams", 2, List.of(
                        new Copy(0, d2hDst, devA.address(), BYTES), new Copy(1, devB.address(), h2dSrc, BYTES)));
                p.report("D2H + H2D, 8M copies, 2 streams", 2, chunked(1, 8 * MB, devA, devB, d2hDst, h2dSrc));
                p.report("D2H + H2D, 8M copies, 2 streams per direction", 4,
                        chunked(2, 8 * MB, devA, devB, d2hDst, h2dSrc));
                p.report("D2H + H2D, 8M copies, 1 stream each, 4-slot ring", 2, ringed(1, devA, devB, ring));
                p.report("D2H + H2D, 8M copies, 2 streams each, 4-slot rings", 4, ringed(2, devA, devB, ring));
                for (Sync full : Sync.values()) {
                    Sync free = full == Sync.DEVICE ? Sync.DEVICE : Sync.HOST;
                    p.reportHandshake("2 x 2 rings of 8M slots, full: " + full + ", free: " + free, 8 * MB, full,
                            free, devA, devB, ring, hostWords, deviceWords);
                }
                for (Sync full : new Sync[] {Sync.EVENT, Sync.HOST}) {
                    p.reportHandshake("2 x 2 rings of 16M slots, full: " + full + ", free: HOST", 16 * MB, full,
                            Sync.HOST, devA, devB, ring, hostWords, deviceWords);
                }
                for (String geometry : new String[] {"8M:4", "16M:2", "16M:4", "12M:4"}) {
                    String[] g = geometry.split(":");
                    for (Collective c : new Collective[] {Collective.ALL_GATHER, Collective.ALL_REDUCE}) {
                        for (boolean inPlace : new boolean[] {false, true}) {
                            double ms = CudaMeasurements.pcieMillis(c, BYTES, g[0], Integer.parseInt(g[1]), true,
                                    inPlace)[0];
                            long perDirection = c == Collective.ALL_GATHER ? BYTES : 2 * BYTES;
                            System.out.printf("%-64s %8.3f %8.1f%n", "the path, " + c + (inPlace ? " in place" : "")
                                    + ", " + g[0] + " x " + g[1] + " slots, gated", ms, perDirection / ms / 1e6);
                        }
                    }
                }
                p.close();
            }
        } finally {
            backend.close();
        }
    }

    /** {@code perDirection} streams each way, each moving its share of 256 MB in {@code chunk} copies. */
    private static List<Copy> chunked(int perDirection, long chunk, DeviceMemory devA, DeviceMemory devB, long d2hDst,
                                      long h2dSrc) {
        List<Copy> copies = new ArrayList<>();
        long share = BYTES / perDirection;
        for (int s = 0; s < perDirection; s++) {
            for (long at = s * share; at < (s + 1) * share; at += chunk) {
                copies.add(new Copy(s, d2hDst + at, devA.address() + at, chunk));
                copies.add(new Copy(perDirection + s, devB.address() + at, h2dSrc + at, chunk));
            }
        }
        return copies;
    }

    /**
     * As the path lays its host memory out: each sending stream cycles through its own four 8M slots and the
     * receiving stream of the other "rank" reads those slots (without the path's handshake, so the reads may
     * overtake the writes; only the bandwidth is of interest).
     */
    private static List<Copy> ringed(int perDirection, DeviceMemory devA, DeviceMemory devB, PinnedMemory ring) {
        List<Copy> copies = new ArrayList<>();
        long chunk = 8 * MB;
        long share = BYTES / perDirection;
        for (int s = 0; s < perDirection; s++) {
            long slots = ring.deviceAddress() + s * 4 * chunk;
            long reader = perDirection + (s + 1) % perDirection;
            int k = 0;
            for (long at = s * share; at < (s + 1) * share; at += chunk, k++) {
                long slot = slots + (k % 4) * chunk;
                copies.add(new Copy(s, slot, devA.address() + at, chunk));
                copies.add(new Copy((int) reader, devB.address() + at, slot, chunk));
            }
        }
        return copies;
    }

    /**
     * How one side of a ring's handshake is carried: an event; a word in pinned host memory (or in device memory)
     * written and waited for by stream memory operations, as the path's flags are; the host word and an event, the
     * reader waiting for the event (what the write costs the writer's stream); an event that a stream aside waits
     * for before it writes the host word (what the wait for a word costs the reader).
     */
    private enum Sync {
        EVENT, HOST, DEVICE, HOST_AND_EVENT, EVENT_THEN_HOST;

        void signal(RuntimeStream s, RuntimeStream aside, RuntimeEvent e, PinnedMemory host, PinnedMemory device,
                    long word, int v) {
            switch (this) {
                case EVENT -> s.record(e);
                case HOST -> s.writeValue32(host, word, v);
                case DEVICE -> s.writeValue32(device, word, v);
                case HOST_AND_EVENT -> {
                    s.writeValue32(host, word, v);
                    s.record(e);
                }
                case EVENT_THEN_HOST -> {
                    s.record(e);
                    aside.waitEvent(e);
                    aside.writeValue32(host, word, v);
                }
                default -> throw new IllegalStateException(name());
            }
        }

        void await(RuntimeStream s, RuntimeEvent e, PinnedMemory host, PinnedMemory device, long word, int v) {
            switch (this) {
                case EVENT, HOST_AND_EVENT -> s.waitEvent(e);
                case DEVICE -> s.waitValue32(device, word, v);
                default -> s.waitValue32(host, word, v);
            }
        }
    }

    /** Device memory seen through {@link PinnedMemory}, so that stream memory operations can name words in it. */
    private record DeviceWords(DeviceMemory memory) implements PinnedMemory {
        @Override
        public long hostAddress() {
            throw new UnsupportedOperationException("device words have no host address");
        }

        @Override
        public long deviceAddress() {
            return memory.address();
        }

        @Override
        public long byteSize() {
            return memory.byteSize();
        }

        @Override
        public String name() {
            return "probe.deviceWords";
        }

        @Override
        public int readCounter(long offset) {
            throw new UnsupportedOperationException("device words are not read from the host");
        }

        @Override
        public void writeCounter(long offset, int value) {
            throw new UnsupportedOperationException("device words are not written from the host");
        }

        @Override
        public void close() {
        }
    }

    /** Streams and events for one round of patterns. */
    private static final class Probe implements AutoCloseable {
        private final CudaBackend backend;
        private final HostGate gate;
        private final int reps;
        private final RuntimeStream[] streams = new RuntimeStream[6];
        private final RuntimeEvent[] done = new RuntimeEvent[6];
        /** Raised before each run of a pattern: the value that host-word handshakes wait for and write. */
        private int round;
        private final RuntimeEvent start;
        private final RuntimeEvent end;

        Probe(CudaBackend backend, HostGate gate, int reps) {
            this.backend = backend;
            this.gate = gate;
            this.reps = reps;
            for (int s = 0; s < streams.length; s++) {
                streams[s] = backend.createStream(0, "probe." + s);
                done[s] = backend.createEvent(0, false);
            }
            start = backend.createEvent(0, true);
            end = backend.createEvent(0, true);
        }

        void report(String name, int streamCount, List<Copy> copies) {
            print(name, time(streamCount, () -> {
                for (Copy c : copies) {
                    streams[c.stream()].copy(c.dst(), c.src(), c.bytes());
                }
            }));
        }

        /**
         * Median ms of {@code body}'s work on the first {@code streamCount} streams: all held on the gate until
         * {@code body} has enqueued, timed from a start on stream 0 that the others wait for to stream 0's end
         * after it has waited for the others.
         */
        private double time(int streamCount, Runnable body) {
            double[] t = new double[reps];
            for (int i = -3; i < reps; i++) {
                gate.hold(() -> {
                    streams[0].record(start);
                    for (int s = 1; s < streamCount; s++) {
                        streams[s].waitEvent(start);
                    }
                    body.run();
                    for (int s = 1; s < streamCount; s++) {
                        streams[s].record(done[s]);
                        streams[0].waitEvent(done[s]);
                    }
                    streams[0].record(end);
                }, Arrays.copyOf(streams, streamCount));
                end.synchronize();
                if (i >= 0) {
                    t[i] = end.elapsedMillis(start);
                }
            }
            return CudaMeasurements.median(t);
        }

        private static void print(String name, double ms) {
            System.out.printf("%-64s %8.3f %8.1f%n", name, ms, BYTES / ms / 1e6);
        }

        /**
         * The 2 x 2 rings with the path's order: the reader of item {@code k} waits for its write ({@code full}),
         * the writer of item {@code k} for the read of item {@code k - 4}, the slot's last use ({@code free}).
         * Host and device words hold a word per item, set to a value raised for every run, so that no word needs
         * a reset. Larger slots halve the handshakes and lengthen the pipeline's fill and drain.
         */
        void reportHandshake(String name, long chunk, Sync full, Sync free, DeviceMemory devA, DeviceMemory devB,
                             PinnedMemory ring, PinnedMemory hostWords, PinnedMemory deviceWords) {
            int items = (int) (BYTES / 2 / chunk);
            RuntimeEvent[][] written = new RuntimeEvent[2][items];
            RuntimeEvent[][] read = new RuntimeEvent[2][items];
            for (int r = 0; r < 2; r++) {
                for (int k = 0; k < items; k++) {
                    written[r][k] = backend.createEvent(0, false);
                    read[r][k] = backend.createEvent(0, false);
                }
            }
            double ms = time(6, () -> {
                int v = ++round;
                for (int k = 0; k < items; k++) {
                    for (int r = 0; r < 2; r++) {
                        long slot = ring.deviceAddress() + (r * 4L + k % 4) * chunk;
                        long at = (r * (long) items + k) * chunk;
                        long writtenWord = 8L * (r * items + k);
                        RuntimeStream writer = streams[r];
                        RuntimeStream reader = streams[2 + (r + 1) % 2];
                        if (k >= 4) {
                            free.await(writer, read[r][k - 4], hostWords, deviceWords, 8L * (r * items + k - 4) + 4,
                                    v);
                        }
                        writer.copy(slot, devA.address() + at, chunk);
                        full.signal(writer, streams[4 + r], written[r][k], hostWords, deviceWords, writtenWord, v);
                        full.await(reader, written[r][k], hostWords, deviceWords, writtenWord, v);
                        reader.copy(devB.address() + at, slot, chunk);
                        free.signal(reader, null, read[r][k], hostWords, deviceWords, writtenWord + 4, v);
                    }
                }
            });
            for (int r = 0; r < 2; r++) {
                for (int k = 0; k < items; k++) {
                    written[r][k].close();
                    read[r][k].close();
                }
            }
            print(name, ms);
        }

        @Override
        public void close() {
            for (int s = 0; s < streams.length; s++) {
                streams[s].close();
                done[s].close();
            }
            start.close();
            end.close();
        }
    }
}
