package io.flexlink.nvshmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.path.CollectiveCall;
import io.flexlink.path.StagedPath;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.sync.EnqueueBudget;
import io.flexlink.verify.DataPattern;
import io.flexlink.verify.Expected;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The NVSHMEM path's algorithms and slot/signal protocol, run on the host backend with NVSHMEM
 * emulated: one pinned buffer per rank plays the symmetric heap, a put-with-signal is a copy into the
 * peer's buffer followed by a counter write on the same stream, a signal wait is a counter wait. With
 * several ranks (which one GPU cannot give NVSHMEM) and tiny chunks and two slots, every collective,
 * in place and not, over sub-ranges at an offset, is checked element by element.
 */
class NvshmemProtocolTest {
    private static final long CHUNK = 1024;
    private static final int SLOTS = 2;

    /** The device of the test's thread, which every path must give back after its work. */
    private static final int CALLER_DEVICE = 7;

    /**
     * NVSHMEM on the host backend: rank {@code rank}'s view of every rank's symmetric buffer. It also
     * follows the thread's current device: every operation must run on the rank's device (rank r uses
     * device r here), and the path must restore the caller's afterwards.
     */
    private static final class EmulatedOps implements NvshmemOps {
        private final PinnedMemory[] heaps;
        private final int rank;
        int current = CALLER_DEVICE;
        int wrongDevice;

        EmulatedOps(PinnedMemory[] heaps, int rank) {
            this.heaps = heaps;
            this.rank = rank;
        }

        private long offset(long local) {
            return local - heaps[rank].deviceAddress();
        }

        private void onRanksDevice() {
            if (current != rank) {
                wrongDevice++;
            }
        }

        @Override
        public int useDevice(int device) {
            int previous = current;
            current = device;
            return previous;
        }

        @Override
        public void restoreDevice(int previous) {
            if (previous >= 0) {
                current = previous;
            }
        }

        @Override
        public void putSignal(RuntimeStream s, long dst, long src, long bytes, long signal, long value, int pe) {
            onRanksDevice();
            s.copy(heaps[pe].deviceAddress() + offset(dst), src, bytes);
            s.writeValue32(heaps[pe], offset(signal), (int) value);
        }

        @Override
        public void setSignal(RuntimeStream s, long signal, long value, int pe) {
            onRanksDevice();
            s.writeValue32(heaps[pe], offset(signal), (int) value);
        }

        @Override
        public void waitAtLeast(RuntimeStream s, long signal, long value) {
            onRanksDevice();
            s.waitValue32(heaps[rank], offset(signal), (int) value);
        }

        @Override
        public void quiet(RuntimeStream s) {
            onRanksDevice();
        }

        @Override
        public void barrier(RuntimeStream s) {
            onRanksDevice();
        }
    }

    private record Case(DataType type, ReduceOp op, long count, boolean inPlace) {
    }

    @Test
    void everyCollectiveOnOneToFourRanks() {
        assertEquals(List.of(), matrix(false));
    }

    /** Random pauses before copies, waits and signal writes shuffle the streams; a deadlock times out. */
    @Test
    void everyCollectiveUnderRandomDelays() {
        assertEquals(List.of(), assertTimeoutPreemptively(Duration.ofMinutes(3), () -> matrix(true)));
    }

    private static List<String> matrix(boolean delays) {
        List<Case> cases = List.of(new Case(DataType.FLOAT32, ReduceOp.SUM, 10_001, false),
                new Case(DataType.BFLOAT16, ReduceOp.AVG, 2_049, true),
                new Case(DataType.INT8, ReduceOp.MAX, 1, false),
                new Case(DataType.FLOAT64, ReduceOp.PROD, 700, true),
                new Case(DataType.INT32, ReduceOp.MIN, 5_000, false));
        List<String> failures = new ArrayList<>();
        for (int n = 1; n <= 4; n++) {
            FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "4").build();
            ThreadLocal<SplittableRandom> random = ThreadLocal.withInitial(
                    () -> new SplittableRandom(Thread.currentThread().getName().hashCode()));
            HostFaults shuffle = (stream, op) -> {
                if (op == HostFaults.Op.COPY || op == HostFaults.Op.WRITE || op == HostFaults.Op.WAIT) {
                    SplittableRandom r = random.get();
                    if (r.nextInt(3) == 0) {
                        LockSupport.parkNanos(r.nextInt(20_000));
                    }
                }
                return HostFaults.Action.RUN;
            };
            try (HostBackend backend = new HostBackend(config, delays ? shuffle : null)) {
                long total = NvshmemChannel.totalBytes(n, SLOTS, CHUNK);
                PinnedMemory[] heaps = new PinnedMemory[n];
                StagedPath[] paths = new StagedPath[n];
                EmulatedOps[] allOps = new EmulatedOps[n];
                for (int r = 0; r < n; r++) {
                    heaps[r] = backend.allocatePinned(total);
                }
                for (int r = 0; r < n; r++) {
                    EmulatedOps ops = new EmulatedOps(heaps, r);
                    allOps[r] = ops;
                    NvshmemChannel ch = new NvshmemChannel(backend, ops, new Object(), heaps[r], r, r, n, SLOTS, CHUNK,
                            heaps[r].deviceAddress(), true);
                    paths[r] = new StagedPath("nvshmem", backend, ch, r, n, r, true, EnqueueBudget.ONE_RANK_PER_THREAD);
                    ch.ready();
                }
                long seed = 1;
                for (Case k : cases) {
                    for (Collective c : Collective.collectives()) {
                        long wrong = run(backend, paths, c, k, (int) (seed % n), seed++, failures);
                        if (wrong > 0) {
                            failures.add(n + " ranks " + c + " " + k + ": " + wrong + " wrong");
                        }
                    }
                }
                for (StagedPath p : paths) {
                    p.close();
                    p.close();
                }
                for (EmulatedOps ops : allOps) {
                    if (ops.wrongDevice > 0 || ops.current != CALLER_DEVICE) {
                        failures.add(n + " ranks, rank " + ops.rank + ": " + ops.wrongDevice
                                + " operations off the rank's device, the thread left on device " + ops.current);
                    }
                }
            }
        }
        return failures;
    }

    /** Runs one collective on every rank, the range cut in two enqueues (the second at an offset). */
    private static long run(HostBackend backend, StagedPath[] paths, Collective c, Case k, int root, long seed,
                            List<String> errors) {
        int n = paths.length;
        int sz = k.type().size();
        ReduceOp dataOp = DataPattern.dataOp(c, k.op());
        long count = k.count();
        long inElems = Expected.inputCount(c, count, n);
        long outElems = Expected.outputCount(c, count, n);
        DeviceMemory[] mem = new DeviceMemory[2 * n];
        CollectiveCall[] calls = new CollectiveCall[n];
        for (int r = 0; r < n; r++) {
            long send;
            long recv;
            if (k.inPlace() && !c.blocked() || k.inPlace() && (c == Collective.ALL_GATHER || c == Collective.REDUCE_SCATTER)) {
                mem[r] = backend.allocate(r, Math.max(inElems, outElems) * sz);
                long base = mem[r].address();
                send = c == Collective.ALL_GATHER ? base + (long) r * count * sz : base;
                recv = c == Collective.REDUCE_SCATTER ? base + (long) r * count * sz : base;
            } else {
                mem[r] = backend.allocate(r, inElems * sz);
                mem[n + r] = backend.allocate(r, outElems * sz);
                send = mem[r].address();
                recv = mem[n + r].address();
            }
            ByteBuffer out = buffer(outElems * sz);
            for (long i = 0; i < outElems; i++) {
                DataPattern.put(out, k.type(), ~Expected.output(c, k.type(), k.op(), seed, n, r, root, count, i));
            }
            out.flip();
            backend.upload(recv, out);
            if (Expected.reads(c, r, root) || k.inPlace()) {
                ByteBuffer in = buffer(inElems * sz);
                DataPattern.fill(in, k.type(), dataOp, seed, n, r, 0, inElems);
                backend.upload(send, in);
            }
            calls[r] = new CollectiveCall().set(c, send, recv, count, k.type(), k.op(), root, null);
        }
        long split = count / 3;
        for (int r = 0; r < n; r++) {
            paths[r].enqueue(calls[r], 0, split);
            paths[r].enqueue(calls[r], split, count - split);
        }
        long wrong = 0;
        for (int r = 0; r < n; r++) {
            for (RuntimeStream s : paths[r].streams()) {
                s.synchronize();
            }
            ByteBuffer out = buffer(outElems * sz);
            backend.download(out, calls[r].recv);
            boolean written = Expected.writes(c, r, root);
            for (long i = 0; i < outElems; i++) {
                long want = Expected.output(c, k.type(), k.op(), seed, n, r, root, count, i);
                if (!written) {
                    want = k.inPlace() && c == Collective.REDUCE ? DataPattern.value(k.type(), dataOp, seed, n, r, i) : ~want;
                }
                want &= DataPattern.mask(k.type());
                long got = DataPattern.get(out, k.type(), i);
                if (got != want && wrong++ < 3) {
                    errors.add(n + " ranks " + c + " " + k + ": rank " + r + " [" + i + "] = 0x"
                            + Long.toHexString(got) + ", expected 0x" + Long.toHexString(want));
                }
            }
        }
        for (DeviceMemory m : mem) {
            if (m != null) {
                m.close();
            }
        }
        return wrong;
    }

    private static ByteBuffer buffer(long bytes) {
        return ByteBuffer.allocateDirect((int) Math.max(bytes, 1)).order(ByteOrder.nativeOrder());
    }
}
