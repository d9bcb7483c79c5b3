package io.flexlink.hier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every argument of a multi-node AlltoAllv that NCCL's rules refuse: the rank that passed it gets
 * INVALID_ARGUMENT naming it, every other rank INVALID_ARGUMENT naming that rank (the counts are agreed
 * before anything moves, so nobody hangs), nothing is enqueued on any stream, and the communicators stay
 * usable. A single-node communicator refuses the same arguments with the same words.
 */
class HierarchyAllToAllvBadInputTest {
    /** One rank's call, with arguments a case may spoil. */
    static final class Call {
        long send;
        long recv;
        long[] sendCounts;
        long[] sendDispls;
        long[] recvCounts;
        long[] recvDispls;
        DataType type = DataType.INT32;
        Stream stream;
        boolean grouped;

        void run(Communicator c) {
            if (grouped) {
                FlexLink.groupStart();
            }
            try {
                c.allToAllv(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, stream);
            } finally {
                if (grouped) {
                    assertThrows(FlexLinkException.class, FlexLink::groupEnd, "the refused call cancelled the group");
                }
            }
        }
    }

    interface Spoil {
        void apply(Call c, TransferRig rig);
    }

    /** A good layout for every rank: {@code counts[i][j] = 50 + 10 i + j}, pieces packed in rank order. */
    static Call good(TransferRig rig, int r) {
        int n = rig.n;
        Call c = new Call();
        c.send = rig.in[r].address();
        c.recv = rig.out[r].address();
        c.sendCounts = new long[n];
        c.sendDispls = new long[n];
        c.recvCounts = new long[n];
        c.recvDispls = new long[n];
        long s = 0;
        long d = 0;
        for (int j = 0; j < n; j++) {
            c.sendCounts[j] = 50 + 10L * r + j;
            c.sendDispls[j] = s;
            s += c.sendCounts[j];
            c.recvCounts[j] = 50 + 10L * j + r;
            c.recvDispls[j] = d;
            d += c.recvCounts[j];
        }
        c.stream = rig.streams[r];
        return c;
    }

    static final int BAD = 1;

    @Test
    void everyBadArgumentIsRefusedOnEveryRankBeforeAnythingIsEnqueued() throws Exception {
        long elems = 2_000;
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, 2, 2, false, elems, 8)) {
            int n = rig.n;
            Object[][] cases = {
                {"sendcounts: 3 entries", (Spoil) (c, g) -> c.sendCounts = new long[n - 1]},
                {"sdispls: null", (Spoil) (c, g) -> c.sendDispls = null},
                {"recvcounts: 5 entries", (Spoil) (c, g) -> c.recvCounts = new long[n + 1]},
                {"rdispls: 0 entries", (Spoil) (c, g) -> c.recvDispls = new long[0]},
                {"sendcounts[2]: -1 is negative", (Spoil) (c, g) -> c.sendCounts[2] = -1},
                {"rdispls[0]: -5 is negative", (Spoil) (c, g) -> c.recvDispls[0] = -5},
                {"overflow a 64-bit byte offset", (Spoil) (c, g) -> c.sendDispls[3] = Long.MAX_VALUE / 2},
                {"datatype: null", (Spoil) (c, g) -> c.type = null},
                {"recvbuff: null", (Spoil) (c, g) -> c.recv = 0},
                {"sendbuff: null", (Spoil) (c, g) -> c.send = 0},
                {"overlaps recvbuff + rdispls[", (Spoil) (c, g) -> c.recvDispls[2] = c.recvDispls[1] + 3},
                {"overlaps sendbuff + sdispls[", (Spoil) (c, g) -> c.recv = c.send},
                {"sendbuff + sdispls[0]: ", (Spoil) (c, g) -> c.send = 4096}, // no allocation of the backend
                {"stream: null", (Spoil) (c, g) -> c.stream = null},
                {"cannot be grouped", (Spoil) (c, g) -> c.grouped = true},
                {"recvcounts[0]: rank 0 sends 51 elements to rank 1, which expects 50",
                    (Spoil) (c, g) -> c.recvCounts[0] = 50}, // fewer: no overlap
            };
            long[] ops = new long[n];
            for (Object[] k : cases) {
                String words = (String) k[0];
                Spoil spoil = (Spoil) k[1];
                rig.poison();
                for (int r = 0; r < n; r++) {
                    ops[r] = rig.backend.enqueuedOps(rig.streams[r]);
                }
                List<Throwable> thrown = rig.attempt(r -> {
                    Call c = good(rig, r);
                    if (r == BAD) {
                        spoil.apply(c, rig);
                    }
                    c.run(rig.comms[r]);
                });
                for (int r = 0; r < n; r++) {
                    Throwable t = thrown.get(r);
                    assertNotNull(t, words + ": rank " + r + " was refused too");
                    FlexLinkException e = assertInstanceOf(FlexLinkException.class, t, words + ": " + t);
                    String m = e.getMessage();
                    if (r == BAD) {
                        Result want = words.equals("cannot be grouped") ? Result.INVALID_USAGE : Result.INVALID_ARGUMENT;
                        assertEquals(want, e.result(), m);
                        assertTrue(m.contains(words), "rank " + r + " names the argument: " + m);
                    } else {
                        assertEquals(Result.INVALID_ARGUMENT, e.result(), m);
                        boolean mismatch = words.startsWith("recvcounts[0]");
                        assertTrue(mismatch ? m.contains("rank 0 sends 51 elements to rank 1, which expects 50")
                                : m.contains("rank " + BAD + "'s arguments were refused") && m.contains(words),
                                "rank " + r + " names rank " + BAD + " and why: " + m);
                    }
                    assertEquals(ops[r], rig.backend.enqueuedOps(rig.streams[r]), words + ": nothing enqueued on rank " + r);
                    assertEquals(Result.SUCCESS, rig.comms[r].getAsyncError(), words + ": rank " + r + " is usable");
                }
            }
            // still usable: a good call afterwards is right
            rig.poison();
            rig.onEveryRank(r -> good(rig, r).run(rig.comms[r]));
            for (int r = 0; r < n; r++) {
                Call mine = good(rig, r);
                int[] got = rig.output(r);
                for (int i = 0; i < n; i++) {
                    Call theirs = good(rig, i);
                    for (int e = 0; e < mine.recvCounts[i]; e++) {
                        assertEquals(rig.value(i, theirs.sendDispls[r] + e), got[(int) (mine.recvDispls[i] + e)],
                                "rank " + r + " from " + i + " [" + e + "]");
                    }
                }
            }
        }
    }

    @Test
    void aSingleNodeCommunicatorRefusesTheSameArgumentsInTheSameWords() throws Exception {
        try (TransferRig rig = new TransferRig(HierarchyThreadsTest.BASE, 2, 2, false, 2_000, 9)) {
            Communicator[] flat = rig.flat(HierarchyThreadsTest.BASE);
            try {
                long before = rig.backend.enqueuedOps(rig.streams[0]);
                for (Spoil spoil : new Spoil[] {(c, g) -> c.recvDispls[2] = c.recvDispls[1] + 3,
                        (c, g) -> c.sendCounts = new long[3], (c, g) -> c.sendDispls[1] = -2}) {
                    Call c = good(rig, 0);
                    spoil.apply(c, rig);
                    List<Throwable> flatAndHier = rig.attempt(r -> {
                        Call mine = good(rig, r);
                        spoil.apply(mine, rig);
                        mine.run(rig.comms[r]);
                    });
                    FlexLinkException single = assertThrows(FlexLinkException.class, () -> c.run(flat[0]));
                    FlexLinkException hier = assertInstanceOf(FlexLinkException.class, flatAndHier.get(0));
                    assertEquals(single.result(), hier.result());
                    assertEquals(single.getMessage(), hier.getMessage());
                }
                assertEquals(before, rig.backend.enqueuedOps(rig.streams[0]), "nothing enqueued");
            } finally {
                for (Communicator c : flat) {
                    c.close();
                }
            }
        }
    }
}
