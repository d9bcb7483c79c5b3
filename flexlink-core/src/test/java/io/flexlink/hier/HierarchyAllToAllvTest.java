package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * AlltoAllv on emulated nodes (threads with their own node id, TCP rails): seeded random counts with
 * zeros, receive pieces in shuffled order with gaps, send pieces anywhere (overlapping reads), outputs
 * poisoned, every element of every output (the gaps too) checked, and the outputs byte for byte those of
 * one single-node communicator over the same ranks; the bytes that leave a node really go out on the rails.
 */
class HierarchyAllToAllvTest {
    /** One rank's arguments, in elements. */
    record Args(long[] sendCounts, long[] sendDispls, long[] recvCounts, long[] recvDispls) {
        Args scaled(long k) {
            return new Args(times(sendCounts, k), times(sendDispls, k), times(recvCounts, k), times(recvDispls, k));
        }

        private static long[] times(long[] a, long k) {
            long[] b = new long[a.length];
            for (int i = 0; i < a.length; i++) {
                b[i] = a[i] * k;
            }
            return b;
        }
    }

    /** {@code counts[i][j]}: what rank i sends to j; each rank's layout drawn from {@code random}. */
    static Args[] layout(long[][] counts, long elems, SplittableRandom random) {
        int n = counts.length;
        Args[] args = new Args[n];
        for (int r = 0; r < n; r++) {
            long[] sendDispls = new long[n];
            long[] recvCounts = new long[n];
            long[] recvDispls = new long[n];
            List<Integer> order = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                order.add(j);
                sendDispls[j] = random.nextLong(elems - counts[r][j] + 1); // reads may overlap
                recvCounts[j] = counts[j][r];
            }
            Collections.shuffle(order, new java.util.Random(random.nextLong()));
            long at = 0;
            for (int p : order) {
                at += random.nextInt(40); // a gap that must stay poisoned
                recvDispls[p] = at;
                at += recvCounts[p];
            }
            assertTrue(at <= elems, "the layout fits");
            args[r] = new Args(counts[r].clone(), sendDispls, recvCounts, recvDispls);
        }
        return args;
    }

    static long[][] randomCounts(int n, long max, SplittableRandom random) {
        long[][] c = new long[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                c[i][j] = random.nextInt(10) < 3 ? 0 : random.nextLong(1, max + 1);
            }
        }
        return c;
    }

    /** What rank {@code r}'s output must hold, element by element. */
    static int[] expected(TransferRig rig, Args[] args, int r) {
        int[] want = new int[(int) rig.elems];
        java.util.Arrays.fill(want, TransferRig.POISON);
        for (int i = 0; i < rig.n; i++) {
            Args a = args[r];
            for (long k = 0; k < a.recvCounts()[i]; k++) {
                want[(int) (a.recvDispls()[i] + k)] = rig.value(i, args[i].sendDispls()[r] + k);
            }
        }
        return want;
    }

    static void call(Communicator c, TransferRig rig, int r, Args a, DataType t) {
        c.allToAllv(rig.in[r].address(), a.sendCounts(), a.sendDispls(), rig.out[r].address(), a.recvCounts(),
                a.recvDispls(), t, rig.streams[r]);
    }

    /** Bytes rank {@code r} read from other nodes over the peer links (AlltoAll's stage between nodes). */
    private static long peerBytes(TransferRig rig, int r) {
        return Math.max(0, rig.comms[r].stats().hierarchy().peerBytesReceived());
    }

    @ParameterizedTest(name = "{0} nodes × {1}, round-robin {2}")
    @CsvSource({"2, 2, false", "3, 3, false", "3, 3, true", "2, 3, true", "3, 1, false"})
    void seededRandomCountsGiveTheSingleNodeResultElementByElement(int nodes, int perNode, boolean roundRobin)
            throws Exception {
        long elems = 12_000;
        long seed = 1_000L * nodes + 10L * perNode + (roundRobin ? 1 : 0);
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, nodes, perNode, roundRobin, elems, seed)) {
            int n = rig.n;
            SplittableRandom random = new SplittableRandom(seed);
            Communicator[] flat = rig.flat(HierarchyThreadsTest.BASE);
            try {
                for (int round = 0; round < 4; round++) {
                    long[][] counts = randomCounts(n, (elems - 40L * n) / n, random);
                    Args[] args = layout(counts, elems, random);
                    // int32 elements, and the same bytes as uint8 (counts and displacements times 4)
                    DataType t = round % 2 == 0 ? DataType.INT32 : DataType.UINT8;
                    long k = t == DataType.INT32 ? 1 : 4;
                    long crossing = 0;
                    for (int i = 0; i < n; i++) {
                        for (int j = 0; j < n; j++) {
                            crossing += rig.nodeOf[i] != rig.nodeOf[j] ? 4 * counts[i][j] : 0;
                        }
                    }
                    long[] railBefore = new long[n];
                    for (int r = 0; r < n; r++) {
                        railBefore[r] = rig.railBytes(r) + peerBytes(rig, r);
                    }
                    rig.poison();
                    rig.onEveryRank(r -> call(rig.comms[r], rig, r, args[r].scaled(k), t));
                    int[][] hier = new int[n][];
                    long railSent = 0;
                    for (int r = 0; r < n; r++) {
                        hier[r] = rig.output(r);
                        assertArrayEquals(expected(rig, args, r), hier[r], "round " + round + " " + t + ": rank " + r);
                        railSent += rig.railBytes(r) + peerBytes(rig, r) - railBefore[r];
                    }
                    assertTrue(crossing > 0, "the pieces cross nodes");
                    assertTrue(railSent >= crossing, "round " + round + ": the rails and peer links read " + railSent
                            + " B from the network, the pieces between nodes are " + crossing + " B");
                    rig.poison();
                    FlexLink.groupStart(); // the single-node communicator: one thread, one group
                    try {
                        for (int r = 0; r < n; r++) {
                            call(flat[r], rig, r, args[r].scaled(k), t);
                        }
                    } finally {
                        FlexLink.groupEnd();
                    }
                    for (int r = 0; r < n; r++) {
                        rig.streams[r].synchronize();
                        assertArrayEquals(rig.output(r), hier[r], "round " + round + ": rank " + r
                                + " differs from the single-node communicator's");
                    }
                }
            } finally {
                for (Communicator c : flat) {
                    c.close();
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} nodes × {1}")
    @CsvSource({"2, 2", "3, 3"})
    void allZeroCountsMoveNothingAndOneSenderReachesEveryNode(int nodes, int perNode) throws Exception {
        long elems = 3_000;
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, nodes, perNode, false, elems, 5)) {
            int n = rig.n;
            long[][] none = new long[n][n];
            Args[] empty = layout(none, elems, new SplittableRandom(1));
            rig.poison();
            long[] ops = new long[n];
            for (int r = 0; r < n; r++) {
                ops[r] = rig.backend.enqueuedOps(rig.streams[r]);
            }
            rig.onEveryRank(r -> call(rig.comms[r], rig, r, empty[r], DataType.INT32));
            for (int r = 0; r < n; r++) {
                assertEquals(ops[r], rig.backend.enqueuedOps(rig.streams[r]), "nothing to move, nothing enqueued");
                assertArrayEquals(expected(rig, empty, r), rig.output(r), "rank " + r + " still poisoned");
            }
            // only the last rank sends, to every rank (itself too): the others' calls still forward its pieces
            long[][] one = new long[n][n];
            for (int j = 0; j < n; j++) {
                one[n - 1][j] = 100 + 37L * j;
            }
            Args[] args = layout(one, elems, new SplittableRandom(2));
            long before = rig.stageBytes(0, "inter");
            rig.poison();
            rig.onEveryRank(r -> call(rig.comms[r], rig, r, args[r], DataType.INT32));
            for (int r = 0; r < n; r++) {
                assertArrayEquals(expected(rig, args, r), rig.output(r), "rank " + r);
            }
            assertTrue(rig.stageBytes(0, "inter") > before, "rank 0's rail stage ran");
        }
    }
}
