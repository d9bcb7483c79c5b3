package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Grouped Send/Recv of a multi-node communicator between ranks of one node (transfers to oneself too),
 * each rank's calls issued in a seeded random order inside its own thread's group: ring shifts inside
 * the node by every distance, all pairs, random pairings with several transfers to one peer; outputs
 * poisoned, every element checked, and the node's PCIe path carried them. A refused call cancels the
 * group, which launches nothing. Transfers between nodes: HierarchyCrossNodeTransfersTest.
 */
class HierarchyGroupedTransfersTest {
    /** One transfer, in elements of the sender's input and the receiver's output. */
    record Transfer(int from, int to, long count, long sendAt, long recvAt) {
    }

    /** Runs every rank's part of {@code transfers} in one group per rank, calls shuffled, and checks every element. */
    static void runAndCheck(TransferRig rig, List<Transfer> transfers, long seed) throws Exception {
        rig.poison();
        rig.onEveryRank(r -> {
            List<Runnable> calls = new ArrayList<>();
            for (Transfer t : transfers) {
                if (t.from() == r) {
                    calls.add(() -> rig.comms[r].send(rig.in[r].address() + 4 * t.sendAt(), t.count(), DataType.INT32,
                            t.to(), rig.streams[r]));
                }
                if (t.to() == r) {
                    calls.add(() -> rig.comms[r].recv(rig.out[r].address() + 4 * t.recvAt(), t.count(), DataType.INT32,
                            t.from(), rig.streams[r]));
                }
            }
            // any order of a rank's sends and receives: only the order per peer and direction matters
            List<Runnable> shuffled = shuffledKeepingPeerOrder(calls, transfers, r, new Random(seed + r));
            FlexLink.groupStart();
            try {
                shuffled.forEach(Runnable::run);
            } finally {
                FlexLink.groupEnd();
            }
        });
        for (int r = 0; r < rig.n; r++) {
            int[] want = new int[(int) rig.elems];
            Arrays.fill(want, TransferRig.POISON);
            for (Transfer t : transfers) {
                if (t.to() == r) {
                    for (long i = 0; i < t.count(); i++) {
                        want[(int) (t.recvAt() + i)] = rig.value(t.from(), t.sendAt() + i);
                    }
                }
            }
            assertArrayEquals(want, rig.output(r), "rank " + r + ": " + transfers);
        }
    }

    /**
     * The calls in a random order, except that the transfers of one (sender, receiver) pair keep their
     * relative order, which is how NCCL matches them.
     */
    private static List<Runnable> shuffledKeepingPeerOrder(List<Runnable> calls, List<Transfer> transfers, int r,
                                                           Random random) {
        List<String> keys = new ArrayList<>();
        for (Transfer t : transfers) {
            if (t.from() == r) {
                keys.add("s" + t.to());
            }
            if (t.to() == r) {
                keys.add("r" + t.from());
            }
        }
        List<Integer> slots = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            slots.add(i);
        }
        Collections.shuffle(slots, random);
        // each key's calls take that key's shuffled positions in their own order
        Runnable[] out = new Runnable[calls.size()];
        List<String> done = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            String k = keys.get(i);
            if (done.contains(k)) {
                continue;
            }
            done.add(k);
            List<Integer> mine = new ArrayList<>();
            List<Integer> positions = new ArrayList<>();
            for (int j = 0; j < calls.size(); j++) {
                if (keys.get(j).equals(k)) {
                    mine.add(j);
                    positions.add(slots.get(j));
                }
            }
            Collections.sort(positions);
            for (int m = 0; m < mine.size(); m++) {
                out[positions.get(m)] = calls.get(mine.get(m));
            }
        }
        return Arrays.asList(out);
    }

    /** Ranks of {@code rank}'s node, in local order. */
    static List<Integer> nodeRanks(TransferRig rig, int rank) {
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; r < rig.n; r++) {
            if (rig.nodeOf[r] == rig.nodeOf[rank]) {
                ranks.add(r);
            }
        }
        return ranks;
    }

    @ParameterizedTest(name = "{0} nodes × {1}, round-robin {2}")
    @CsvSource({"2, 2, false", "3, 3, false", "3, 3, true"})
    void everyPatternInsideANodeDeliversEveryElement(int nodes, int perNode, boolean roundRobin) throws Exception {
        long elems = 40_000;
        long count = 9_001; // several 16 KB chunks on both of the node's paths
        long seed = 31L * nodes + perNode + (roundRobin ? 7 : 0);
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, nodes, perNode, roundRobin, elems, seed)) {
            long pcieBefore = pcieBytes(rig.comms[0]);
            for (int k = 0; k < perNode; k++) { // ring shift by k inside each node (k = 0: to itself)
                List<Transfer> ring = new ArrayList<>();
                for (int r = 0; r < rig.n; r++) {
                    List<Integer> node = nodeRanks(rig, r);
                    int at = node.indexOf(r);
                    ring.add(new Transfer(r, node.get((at + k) % perNode), count, 7L * r, 3L * k));
                }
                runAndCheck(rig, ring, seed + k);
            }
            List<Transfer> pairs = new ArrayList<>(); // every rank to every rank of its node, itself included
            for (int r = 0; r < rig.n; r++) {
                for (int q : nodeRanks(rig, r)) {
                    int slot = nodeRanks(rig, q).indexOf(r);
                    pairs.add(new Transfer(r, q, 4_000 + 11L * r, 13L * q, slot * 4_500L));
                }
            }
            runAndCheck(rig, pairs, seed + 100);
            SplittableRandom random = new SplittableRandom(seed);
            for (int round = 0; round < 3; round++) { // random pairings, several transfers to one peer
                List<Transfer> some = new ArrayList<>();
                long[] recvAt = new long[rig.n];
                for (int t = 0; t < 4 * rig.n; t++) {
                    int from = random.nextInt(rig.n);
                    List<Integer> node = nodeRanks(rig, from);
                    int to = node.get(random.nextInt(node.size()));
                    long c = random.nextLong(1, 3_000);
                    if (recvAt[to] + c > elems) {
                        continue;
                    }
                    some.add(new Transfer(from, to, c, random.nextLong(elems - c), recvAt[to]));
                    recvAt[to] += c + random.nextInt(5);
                }
                runAndCheck(rig, some, seed + 200 + round);
            }
            assertTrue(pcieBytes(rig.comms[0]) > pcieBefore, "the node's PCIe path carried part of the transfers");
        }
    }

    private static long pcieBytes(Communicator c) {
        return c.stats().paths().stream().filter(p -> p.path().equals("pcie")).mapToLong(p -> p.bytes()).sum();
    }

    @Test
    void aRefusedCallCancelsTheGroup() throws Exception {
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, 2, 2, false, 1_000, 3)) {
            rig.poison();
            long before = rig.backend.enqueuedOps(rig.streams[0]);
            FlexLink.groupStart();
            FlexLinkException refused;
            try {
                rig.comms[0].send(rig.in[0].address(), 100, DataType.INT32, 1, rig.streams[0]); // node 0: taken
                rig.comms[0].recv(rig.out[0].address(), 100, DataType.INT32, 0, rig.streams[0]); // itself: taken
                refused = assertThrows(FlexLinkException.class, // a collective cannot be grouped here
                        () -> rig.comms[0].allReduce(rig.in[0].address(), rig.out[0].address(), 100, DataType.INT32,
                                io.flexlink.ReduceOp.SUM, rig.streams[0]));
            } finally {
                FlexLinkException end = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
                assertEquals(Result.INVALID_USAGE, end.result(), end.getMessage());
                assertTrue(end.getMessage().contains("cancelled"), end.getMessage());
            }
            assertEquals(Result.INVALID_USAGE, refused.result());
            assertTrue(refused.getMessage().contains("cannot be grouped"), refused.getMessage());
            assertEquals(before, rig.backend.enqueuedOps(rig.streams[0]), "nothing of the group was launched");
            int[] poisoned = new int[1_000];
            Arrays.fill(poisoned, TransferRig.POISON);
            assertArrayEquals(poisoned, rig.output(0));
            assertEquals(Result.SUCCESS, rig.comms[0].getAsyncError(), "the communicator stays usable");
            for (int peer : new int[] {-1, 4}) { // not a rank: NCCL's INVALID_ARGUMENT, grouped or not
                FlexLink.groupStart();
                try {
                    FlexLinkException e = assertThrows(FlexLinkException.class,
                            () -> rig.comms[0].recv(rig.out[0].address(), 10, DataType.INT32, peer, rig.streams[0]));
                    assertEquals(Result.INVALID_ARGUMENT, e.result());
                    assertTrue(e.getMessage().contains("peer: " + peer), e.getMessage());
                } finally {
                    assertThrows(FlexLinkException.class, FlexLink::groupEnd);
                }
                FlexLinkException e = assertThrows(FlexLinkException.class,
                        () -> rig.comms[0].send(rig.in[0].address(), 10, DataType.INT32, peer, rig.streams[0]));
                assertEquals(Result.INVALID_ARGUMENT, e.result());
            }
            assertEquals(before, rig.backend.enqueuedOps(rig.streams[0]), "nothing enqueued by the refused calls");
            runAndCheck(rig, List.of(new Transfer(0, 1, 500, 0, 0), new Transfer(1, 0, 500, 9, 100),
                    new Transfer(2, 3, 500, 0, 0), new Transfer(3, 3, 200, 1, 600)), 9);
        }
    }

    /**
     * A node of one rank has no node communicator: its transfers to itself go over the peer links' lane, paired
     * at the group's end as NCCL pairs them; outside a group they are refused, and a send to itself without a
     * matching receive fails the group's end with INVALID_USAGE.
     */
    @Test
    void aNodeOfOneRankSendsToItselfInsideAGroup() throws Exception {
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, 3, 1, false, 1_000, 4)) {
            assertInstanceOf(HierarchicalCommunicator.class, rig.comms[1]);
            runAndCheck(rig, List.of(new Transfer(1, 1, 300, 5, 0), new Transfer(1, 1, 200, 0, 400),
                    new Transfer(0, 1, 100, 2, 700), new Transfer(1, 2, 50, 9, 0)), 4);
            FlexLinkException ungrouped = assertThrows(FlexLinkException.class,
                    () -> rig.comms[1].recv(rig.out[1].address(), 10, DataType.INT32, 1, rig.streams[1]));
            assertEquals(Result.INVALID_USAGE, ungrouped.result());
            assertTrue(ungrouped.getMessage().contains("needs its send and receive in one group"),
                    ungrouped.getMessage());
            FlexLink.groupStart();
            rig.comms[1].send(rig.in[1].address(), 10, DataType.INT32, 1, rig.streams[1]);
            rig.comms[1].recv(rig.out[1].address(), 20, DataType.INT32, 1, rig.streams[1]);
            FlexLinkException unmatched = assertThrows(FlexLinkException.class, FlexLink::groupEnd);
            assertEquals(Result.INVALID_USAGE, unmatched.result());
            assertTrue(unmatched.getMessage().contains("matching receive takes 80"), unmatched.getMessage());
        }
    }
}
