package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Paths;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * NCCL's grouped send/recv on every path: rings, random patterns with several transfers to one peer,
 * AlltoAllv with uneven splits, transfers to oneself; outputs poisoned, every element checked, bytes per
 * path asserted; and the argument checks.
 */
class PointToPointTest {
    private static FlexLinkConfig config(String paths) {
        FlexLinkConfig.Builder b = FlexLinkConfig.builder().set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.TUNING_CACHE, "off");
        switch (paths) {
            case "primary": return b.set(FlexLinkConfig.PATHS, "primary").build();
            case "pcie": return b.set(FlexLinkConfig.PATHS, "pcie").build();
            default: return b.set(FlexLinkConfig.PATHS, "primary,pcie").set(FlexLinkConfig.SHARE, "pcie=0.4").build();
        }
    }

    /** One planned transfer. */
    record Transfer(int from, int to, long count, long sendAt, long recvAt) {
    }

    private static final class Rig implements AutoCloseable {
        final HostBackend backend;
        final Communicator[] comms;
        final RuntimeStream[] streams;
        final DeviceMemory[] in;
        final DeviceMemory[] out;
        final int n;

        Rig(String paths, int n, long elems) {
            FlexLinkConfig config = config(paths);
            this.backend = new HostBackend(config);
            this.n = n;
            int[] devices = new int[n];
            for (int r = 0; r < n; r++) {
                devices[r] = r;
            }
            this.comms = FlexLink.initAll(backend, config, devices);
            this.streams = new RuntimeStream[n];
            this.in = new DeviceMemory[n];
            this.out = new DeviceMemory[n];
            for (int r = 0; r < n; r++) {
                streams[r] = backend.createStream(r, "user.r" + r);
                in[r] = backend.allocate(r, elems * 4);
                out[r] = backend.allocate(r, elems * 4);
                ByteBuffer b = ByteBuffer.allocateDirect((int) elems * 4).order(ByteOrder.nativeOrder());
                for (int i = 0; i < elems; i++) {
                    b.putInt(4 * i, value(r, i));
                }
                backend.upload(in[r].address(), b);
                backend.fill(out[r].address(), elems * 4, (byte) 0xA5);
            }
        }

        static int value(int r, long i) {
            return (int) (r * 1_000_003L + i * 7 + 1);
        }

        /** Runs the transfers in one group and returns the wrong elements. */
        long run(List<Transfer> transfers) {
            FlexLink.groupStart();
            try {
                for (int r = 0; r < n; r++) {
                    for (Transfer t : transfers) {
                        if (t.from() == r) {
                            comms[r].send(in[r].address() + 4 * t.sendAt(), t.count(), DataType.INT32, t.to(), streams[r]);
                        }
                        if (t.to() == r) {
                            comms[r].recv(out[r].address() + 4 * t.recvAt(), t.count(), DataType.INT32, t.from(),
                                    streams[r]);
                        }
                    }
                }
            } finally {
                FlexLink.groupEnd();
            }
            for (RuntimeStream s : streams) {
                s.synchronize();
            }
            long wrong = 0;
            for (int r = 0; r < n; r++) {
                ByteBuffer b = ByteBuffer.allocateDirect((int) out[r].byteSize()).order(ByteOrder.nativeOrder());
                backend.download(b, out[r].address());
                for (Transfer t : transfers) {
                    if (t.to() != r) {
                        continue;
                    }
                    for (long i = 0; i < t.count(); i++) {
                        if (b.getInt((int) (4 * (t.recvAt() + i))) != value(t.from(), t.sendAt() + i)) {
                            wrong++;
                        }
                    }
                }
            }
            return wrong;
        }

        @Override
        public void close() {
            for (int r = 0; r < n; r++) {
                comms[r].close();
                streams[r].close();
                in[r].close();
                out[r].close();
            }
            backend.close();
        }
    }

    @ParameterizedTest(name = "{0} over {1} ranks")
    @CsvSource({"primary, 1", "primary, 3", "pcie, 1", "pcie, 2", "pcie, 4", "mixed, 1", "mixed, 3", "mixed, 4"})
    void aRingOfSendsAndReceivesEveryElementRight(String paths, int n) {
        long count = 20_011; // about 20 chunks of 4 KB through 2 slots
        try (Rig rig = new Rig(paths, n, 2 * count)) {
            List<Transfer> ring = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                ring.add(new Transfer(r, (r + 1) % n, count, 0, count));
                ring.add(new Transfer(r, Math.floorMod(r - 1, n), count, count, 0));
            }
            long[] before = Paths.bytes(rig.comms[0]);
            assertEquals(0, rig.run(ring));
            long[] after = Paths.bytes(rig.comms[0]);
            List<String> names = Paths.names(rig.comms[0]);
            long moved = 0;
            for (int p = 0; p < names.size(); p++) {
                moved += after[p] - before[p];
                if (paths.equals("mixed")) {
                    assertTrue(after[p] > before[p], "every path carried part of the transfers: " + names);
                }
            }
            assertEquals(4 * count * 4, moved, "rank 0's two sends and two receives, once each");
        }
    }

    @ParameterizedTest(name = "{0}, seed {1}")
    @CsvSource({"pcie, 1", "pcie, 2", "mixed, 3", "primary, 4"})
    void randomPatternsWithSeveralTransfersToOnePeer(String paths, long seed) {
        int n = 4;
        long elems = 60_000;
        SplittableRandom random = new SplittableRandom(seed);
        try (Rig rig = new Rig(paths, n, elems)) {
            for (int round = 0; round < 3; round++) {
                List<Transfer> transfers = new ArrayList<>();
                long[] recvAt = new long[n];
                for (int k = 0; k < 10; k++) {
                    int from = random.nextInt(n);
                    int to = random.nextInt(n);
                    long count = random.nextInt(1, 6000);
                    if (recvAt[to] + count > elems) {
                        continue;
                    }
                    transfers.add(new Transfer(from, to, count, random.nextLong(elems - count), recvAt[to]));
                    recvAt[to] += count;
                }
                assertEquals(0, rig.run(transfers), "round " + round + ": " + transfers);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"pcie", "mixed"})
    void allToAllvWithUnevenSplits(String paths) {
        int n = 3;
        long[][] counts = {{5, 3000, 0}, {7000, 1, 257}, {0, 4096, 9999}}; // counts[from][to]
        try (Rig rig = new Rig(paths, n, 30_000)) {
            for (int r = 0; r < n; r++) {
                long[] sendCounts = counts[r];
                long[] sendDispls = new long[n];
                long[] recvCounts = new long[n];
                long[] recvDispls = new long[n];
                long s = 0;
                long d = 0;
                for (int j = 0; j < n; j++) {
                    sendDispls[j] = s;
                    s += sendCounts[j];
                    recvCounts[j] = counts[j][r];
                    recvDispls[j] = d;
                    d += recvCounts[j];
                }
                FlexLink.groupStart(); // every rank's AlltoAllv in one group: one thread drives them all
                rig.comms[r].allToAllv(rig.in[r].address(), sendCounts, sendDispls, rig.out[r].address(), recvCounts,
                        recvDispls, DataType.INT32, rig.streams[r]);
                if (r < n - 1) {
                    continue; // the group stays open until the last rank's call
                }
            }
            for (int r = 0; r < n; r++) {
                FlexLink.groupEnd();
            }
            for (RuntimeStream st : rig.streams) {
                st.synchronize();
            }
            for (int r = 0; r < n; r++) {
                ByteBuffer b = ByteBuffer.allocateDirect((int) rig.out[r].byteSize()).order(ByteOrder.nativeOrder());
                rig.backend.download(b, rig.out[r].address());
                long at = 0;
                for (int p = 0; p < n; p++) {
                    long sendDispl = 0;
                    for (int j = 0; j < r; j++) {
                        sendDispl += counts[p][j];
                    }
                    for (long i = 0; i < counts[p][r]; i++) {
                        assertEquals(Rig.value(p, sendDispl + i), b.getInt((int) (4 * (at + i))),
                                "rank " + r + ", from rank " + p + ", element " + i);
                    }
                    at += counts[p][r];
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"pcie", "mixed"})
    void badTransfersAreRefusedAndNothingIsEnqueued(String paths) {
        try (Rig rig = new Rig(paths, 2, 1024)) {
            FlexLinkException e = assertThrows(FlexLinkException.class,
                    () -> rig.comms[0].send(rig.in[0].address(), 8, DataType.INT32, 2, rig.streams[0]));
            assertEquals(Result.INVALID_ARGUMENT, e.result());
            assertTrue(e.getMessage().contains("peer"), e.getMessage());
            e = assertThrows(FlexLinkException.class,
                    () -> rig.comms[0].recv(0, 8, DataType.INT32, 1, rig.streams[0]));
            assertTrue(e.getMessage().contains("buff"), e.getMessage());
            RuntimeStream other = rig.backend.createStream(0, "other");
            FlexLink.groupStart();
            rig.comms[0].send(rig.in[0].address(), 8, DataType.INT32, 1, rig.streams[0]);
            e = assertThrows(FlexLinkException.class,
                    () -> rig.comms[0].recv(rig.out[0].address(), 8, DataType.INT32, 1, other));
            assertEquals(Result.INVALID_USAGE, e.result());
            FlexLinkException end = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
            assertEquals(Result.INVALID_USAGE, end.result(), "the whole group was cancelled");
            other.close();
            // the communicators stay usable: a ring afterwards is right
            assertEquals(0, rig.run(List.of(new Transfer(0, 1, 100, 0, 0), new Transfer(1, 0, 100, 0, 0))));
        }
    }
}
