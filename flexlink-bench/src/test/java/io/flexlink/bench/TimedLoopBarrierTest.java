package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.DataType;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

/**
 * -z 1 against -z 2, as the README has them: both wait for a thread's own stream after each call, and -z 1
 * then meets the other threads (-t) at a barrier, -z 2 does not. Two threads of one rank each; every call
 * writes a done mark on its rank's stream and notes, when it is enqueued, the marks it can see.
 *
 * <p>With -z 1 no thread enqueues call k+1 before the other thread's call k is done: every call sees the
 * other rank's previous mark, whatever the scheduling. With -z 2 rank 1's calls are held by a gate that
 * only thread 0's last call opens: thread 0 makes all its calls while rank 1's first is still pending,
 * which -z 1's barrier forbids (under it this schedule would never end).
 */
class TimedLoopBarrierTest {
    private static final int ITERS = 5;
    private static final int RANKS = 2;

    /** What the run's calls saw. */
    private static final class Seen {
        /** Per rank, per call k >= 1: the other rank's mark of call k - 1 when call k was enqueued. */
        final List<List<Integer>> otherPrevious = List.of(new ArrayList<>(), new ArrayList<>());
        /** Per rank, per call k >= 1: its own mark of call k - 1. */
        final List<List<Integer>> ownPrevious = List.of(new ArrayList<>(), new ArrayList<>());
        /** Per rank, per call: the other rank's first mark. */
        final List<List<Integer>> otherFirst = List.of(new ArrayList<>(), new ArrayList<>());
        /** Every enqueue in the order the threads made them, as {rank, call}. */
        final ConcurrentLinkedQueue<int[]> order = new ConcurrentLinkedQueue<>();

        int position(int rank, int call) {
            int i = 0;
            for (int[] e : order) {
                if (e[0] == rank && e[1] == call) {
                    return i;
                }
                i++;
            }
            throw new AssertionError("no call " + call + " of rank " + rank);
        }
    }

    private static Seen run(int blocking, boolean gateRankOne) {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "host").build();
        try (HostBackend backend = new HostBackend(config)) {
            Workspace.StreamSource streams = GatedMarkingTarget.hostStreams(backend);
            try (Workspace ws = new Workspace(backend, streams, new int[] {0, 1}, 4096, 0, 0, RankLayout.whole(RANKS));
                 DriverThreads threads = new DriverThreads(RANKS, 1, null);
                 PinnedMemory marks = backend.allocatePinned(4L * RANKS * ITERS);
                 PinnedMemory gate = backend.allocatePinned(4)) {
                PerfOptions o = new PerfOptions();
                o.blocking = blocking;
                o.aggIters = 1; // picocli gives the defaults; a bare PerfOptions has 0
                CallSpec call = new CallSpec(PerfCollective.ALL_REDUCE,
                        PerfCollective.ALL_REDUCE.shape(1024, DataType.FLOAT32, RANKS), DataType.FLOAT32, PerfOp.SUM,
                        -1, ws);
                Seen seen = new Seen();
                try (MarkingTarget target = new MarkingTarget(ws, marks, gateRankOne ? gate : null, backend, seen)) {
                    TimedLoop loop = new TimedLoop(o, new StreamWait(ws, 0), threads);
                    assertTimeoutPreemptively(Duration.ofSeconds(60), // a closed gate or a lost barrier: no end
                            () -> threads.run(t -> loop.run(target, call, t, ITERS)));
                } finally {
                    gate.writeCounter(0, 1); // after a failure too: the workspace's close waits for rank 1's stream
                }
                for (int r = 0; r < RANKS; r++) {
                    for (int k = 0; k < ITERS; k++) {
                        assertEquals(1, marks.readCounter(mark(r, k)), "the loop's waits waited for rank " + r
                                + "'s call " + k);
                    }
                }
                return seen;
            }
        }
    }

    private static long mark(int rank, int call) {
        return 4L * (rank * ITERS + call);
    }

    @Test
    void withZ1NoThreadRunsAheadOfTheOthersPreviousCall() {
        Seen s = run(1, false);
        for (int r = 0; r < RANKS; r++) {
            assertEquals(List.of(1, 1, 1, 1), s.ownPrevious.get(r), "rank " + r + " waited for its own calls");
            assertEquals(List.of(1, 1, 1, 1), s.otherPrevious.get(r), "rank " + r + " met the other at the barrier");
        }
        for (int k = 0; k + 1 < ITERS; k++) {
            for (int r = 0; r < RANKS; r++) {
                assertTrue(s.position(r, k + 1) > s.position(1 - r, k), "rank " + r + "'s call " + (k + 1)
                        + " came before rank " + (1 - r) + "'s call " + k);
            }
        }
    }

    @Test
    void withZ2AThreadRunsAllItsCallsWhileTheOtherIsHeld() {
        Seen s = run(2, true);
        for (int r = 0; r < RANKS; r++) {
            assertEquals(List.of(1, 1, 1, 1), s.ownPrevious.get(r), "rank " + r + " waited for its own calls");
        }
        // thread 0 never met thread 1: rank 1's first call was still held at every one of thread 0's calls
        assertEquals(List.of(0, 0, 0, 0, 0), s.otherFirst.get(0));
        assertEquals(List.of(0, 0, 0, 0), s.otherPrevious.get(0));
        // and thread 1 stayed in its wait after its first call until thread 0 had made its last
        assertTrue(s.position(1, 1) > s.position(0, ITERS - 1), "rank 1's call 1 before rank 0's last call");
    }

    /** Each rank's calls as done marks on its stream; rank 1's behind the gate when there is one. */
    private static final class MarkingTarget extends GatedMarkingTarget {
        final Seen seen;
        /** Per rank: touched only by the thread that drives it. */
        final int[] calls = new int[RANKS];

        MarkingTarget(Workspace ws, PinnedMemory marks, PinnedMemory gate, HostBackend backend, Seen seen) {
            super(ws, marks, gate, backend);
            this.seen = seen;
        }

        @Override
        public void enqueue(CallSpec call, int from, int to, int iter) {
            int r = from; // one rank per thread
            int other = 1 - r;
            int k = calls[r]++;
            seen.order.add(new int[] {r, k});
            seen.otherFirst.get(r).add(marks.readCounter(mark(other, 0)));
            if (k > 0) {
                seen.ownPrevious.get(r).add(marks.readCounter(mark(r, k - 1)));
                seen.otherPrevious.get(r).add(marks.readCounter(mark(other, k - 1)));
            }
            RuntimeStream s = ws.stream(r);
            if (gate != null && r == 1) {
                s.waitValue32(gate, 0, 1);
            }
            s.writeValue32(marks, mark(r, k), 1);
            if (gate != null && r == 0 && k == ITERS - 1) {
                opener.writeValue32(gate, 0, 1); // a stream of its own: rank 0's waits never depend on it
            }
        }
    }
}
