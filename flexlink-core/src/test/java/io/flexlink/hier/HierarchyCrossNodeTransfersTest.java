package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.hier.HierarchyGroupedTransfersTest.Transfer;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.Refusals;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Send and Recv between nodes of a multi-node communicator (emulated nodes, TCP peer links): every ordered pair
 * of ranks on different nodes outside a group, with the other ranks making no call at all; grouped exchanges
 * mixing transfers inside and between nodes and to oneself (on nodes of one rank too) (ring shifts by every distance over the job, all
 * pairs, seeded random pairings with several transfers to one peer, calls shuffled); outputs poisoned, every
 * element checked, and every rank's peer links read exactly the bytes sent to it from other nodes while its
 * rail read none. Bad arguments are refused with NCCL's codes before anything is enqueued, and a refused call
 * cancels its group's transfers between nodes too.
 */
class HierarchyCrossNodeTransfersTest {
    private static long peerBytes(TransferRig rig, int r) {
        return rig.comms[r].stats().hierarchy().peerBytesReceived();
    }

    private static long[] peerBytes(TransferRig rig) {
        long[] b = new long[rig.n];
        for (int r = 0; r < rig.n; r++) {
            b[r] = peerBytes(rig, r);
        }
        return b;
    }

    private static long[] railBytes(TransferRig rig) {
        long[] b = new long[rig.n];
        for (int r = 0; r < rig.n; r++) {
            b[r] = rig.railBytes(r);
        }
        return b;
    }

    /** Runs {@code transfers} grouped and checks the outputs and that exactly the bytes between nodes came in. */
    private static void runCounted(TransferRig rig, List<Transfer> transfers, long seed) throws Exception {
        long[] peersBefore = peerBytes(rig);
        long[] railBefore = railBytes(rig);
        HierarchyGroupedTransfersTest.runAndCheck(rig, transfers, seed);
        for (int r = 0; r < rig.n; r++) {
            long want = 0;
            for (Transfer t : transfers) {
                if (t.to() == r && rig.nodeOf[t.from()] != rig.nodeOf[r]) {
                    want += 4 * t.count();
                }
            }
            assertEquals(want, peerBytes(rig, r) - peersBefore[r], "rank " + r + ": bytes from other nodes");
            assertEquals(railBefore[r], rig.railBytes(r), "rank " + r + ": the rails carry no Send or Recv");
        }
    }

    @ParameterizedTest(name = "{0} nodes × {1}, round-robin {2}")
    @CsvSource({"2, 2, false", "2, 1, false", "3, 2, true"})
    void everyPairOutsideAGroupWhileTheOtherRanksMakeNoCall(int nodes, int perNode, boolean roundRobin)
            throws Exception {
        long elems = 30_000;
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, nodes, perNode, roundRobin, elems, 5)) {
            for (int a = 0; a < rig.n; a++) {
                for (int b = 0; b < rig.n; b++) {
                    if (rig.nodeOf[a] == rig.nodeOf[b]) {
                        continue;
                    }
                    int from = a;
                    int to = b;
                    long count = 10_001 + 97L * a + b; // several 16 KB chunks, more than the slots hold
                    long at = 3L * b;
                    rig.poison();
                    long before = peerBytes(rig, to);
                    rig.onEveryRank(r -> { // only the two ranks call anything
                        if (r == from) {
                            rig.comms[r].send(rig.in[r].address() + 4 * at, count, DataType.INT32, to, rig.streams[r]);
                        } else if (r == to) {
                            rig.comms[r].recv(rig.out[r].address() + 4 * at, count, DataType.INT32, from,
                                    rig.streams[r]);
                        }
                    });
                    int[] want = new int[(int) elems];
                    Arrays.fill(want, TransferRig.POISON);
                    for (long i = 0; i < count; i++) {
                        want[(int) (at + i)] = rig.value(from, at + i);
                    }
                    assertArrayEquals(want, rig.output(to), from + " -> " + to);
                    assertEquals(4 * count, peerBytes(rig, to) - before, from + " -> " + to);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} nodes × {1}, round-robin {2}")
    @CsvSource({"2, 2, false", "2, 1, false", "2, 2, true", "3, 2, false"})
    void groupedExchangesMixingNodesDeliverEveryElement(int nodes, int perNode, boolean roundRobin) throws Exception {
        long elems = 60_000;
        long seed = 17L * nodes + perNode + (roundRobin ? 5 : 0);
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, nodes, perNode, roundRobin, elems, seed)) {
            for (int k = 0; k < rig.n; k++) { // ring shift by k over the whole job (k = 0: to itself)
                List<Transfer> ring = new ArrayList<>();
                for (int r = 0; r < rig.n; r++) {
                    ring.add(new Transfer(r, (r + k) % rig.n, 9_001, 5L * r, 2L * k));
                }
                runCounted(rig, ring, seed + k);
            }
            List<Transfer> pairs = new ArrayList<>(); // every rank to every rank, itself included
            for (int r = 0; r < rig.n; r++) {
                for (int q = 0; q < rig.n; q++) {
                    pairs.add(new Transfer(r, q, 3_000 + 7L * r, 11L * q, r * 3_500L));
                }
            }
            runCounted(rig, pairs, seed + 100);
            SplittableRandom random = new SplittableRandom(seed);
            for (int round = 0; round < 3; round++) { // random pairings, several transfers to one peer
                List<Transfer> some = new ArrayList<>();
                long[] recvAt = new long[rig.n];
                for (int t = 0; t < 4 * rig.n; t++) {
                    int from = random.nextInt(rig.n);
                    int to = random.nextInt(rig.n);
                    long c = random.nextLong(1, 12_000);
                    if (recvAt[to] + c > elems) {
                        continue;
                    }
                    some.add(new Transfer(from, to, c, random.nextLong(elems - c), recvAt[to]));
                    recvAt[to] += c + random.nextInt(5);
                }
                runCounted(rig, some, seed + 200 + round);
            }
        }
    }

    @Test
    void badArgumentsAreRefusedBeforeAnythingIsEnqueued() throws Exception {
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, 2, 2, false, 1_000, 3)) {
            RuntimeStream s = rig.streams[0];
            long in = rig.in[0].address();
            for (int peer : new int[] {-1, 4}) { // not a rank: NCCL's INVALID_ARGUMENT
                Refusals.refused(rig.backend, s, Result.INVALID_ARGUMENT, "peer",
                        () -> rig.comms[0].send(in, 10, DataType.INT32, peer, s));
            }
            Refusals.refused(rig.backend, s, Result.INVALID_ARGUMENT, "count",
                    () -> rig.comms[0].send(in, -1, DataType.INT32, 2, s));
            Refusals.refused(rig.backend, s, Result.INVALID_ARGUMENT, "datatype",
                    () -> rig.comms[0].recv(in, 10, null, 3, s));
            Refusals.refused(rig.backend, s, Result.INVALID_ARGUMENT, "buff: null",
                    () -> rig.comms[0].recv(0, 10, DataType.INT32, 3, s));
            assertEquals(0, peerBytes(rig, 2) + peerBytes(rig, 3), "nothing left for another node");
            RuntimeStream other = rig.backend.createStream(rig.comms[0].device(), "other");
            long before = rig.backend.enqueuedOps(s);
            FlexLink.groupStart();
            FlexLinkException refused;
            try {
                rig.comms[0].send(in, 100, DataType.INT32, 1, s); // inside the node: recorded
                rig.comms[0].send(in, 100, DataType.INT32, 2, s); // to node 1: recorded
                refused = assertThrows(FlexLinkException.class, // another stream for this group's transfers
                        () -> rig.comms[0].send(in, 100, DataType.INT32, 3, other));
            } finally {
                FlexLinkException end = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
                assertEquals(Result.INVALID_USAGE, end.result(), end.getMessage());
                assertTrue(end.getMessage().contains("cancelled"), end.getMessage());
            }
            assertEquals(Result.INVALID_USAGE, refused.result());
            assertTrue(refused.getMessage().contains("stream"), refused.getMessage());
            assertEquals(before, rig.backend.enqueuedOps(s), "nothing of the group was launched");
            other.close();
            // the communicators stay usable, and nothing of the cancelled group reaches node 1
            runCounted(rig, List.of(new Transfer(0, 2, 500, 0, 0), new Transfer(2, 0, 500, 9, 100),
                    new Transfer(1, 3, 300, 1, 0), new Transfer(3, 3, 200, 1, 600)), 9);
            assertEquals(Result.SUCCESS, rig.comms[0].getAsyncError());
        }
    }
}
