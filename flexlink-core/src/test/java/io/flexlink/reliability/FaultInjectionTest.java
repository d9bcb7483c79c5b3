package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.host.HostFaults;
import io.flexlink.testing.Bounded;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.RepetitionInfo;

/**
 * Faults injected into one communicator of the host backend, each run 50 times: the error reaches
 * every rank of that communicator (through the abort word in the shared staging area, or the watchdog),
 * no caller's stream stays blocked, the next call on every rank throws the error, another communicator
 * of the same backend keeps working meanwhile, and closing leaves no memory, stream or thread behind.
 * Faults that stop progress without an error are found by the watchdog (50 ms); errors are found by
 * its polling (a round every 30 ms with a 300 ms timeout) well before any timeout could fire.
 */
class FaultInjectionTest {
    private static final String ERRORS = "300ms";
    private static final String STALLS = "50ms";

    @RepeatedTest(50)
    void aPathThrowingMidCollective(RepetitionInfo rep) {
        try (FaultRig rig = new FaultRig(ERRORS)) {
            // rank 1's PCIe path fails on its second reduction (of two chunks, on the reduction's own stream):
            // mid-collective
            rig.faults.set(HostFaults.targeting(1, "pcie.local", HostFaults.Op.REDUCE, nth -> {
                if (nth == 2) {
                    throw new IllegalStateException("injected: the path failed mid-collective");
                }
                return HostFaults.Action.RUN;
            }));
            rig.enqueue(0);
            rig.enqueue(1);
            assertArrayEquals(new Result[] {Result.REMOTE_ERROR, Result.INTERNAL_ERROR}, rig.errorEverywhere());
            Bounded.idle(rig.streams[0], FaultRig.BOUND);
            Bounded.idle(rig.streams[1], FaultRig.BOUND);
            assertPeerAbort(rig.nextCallThrows(0, Result.REMOTE_ERROR), "rank 1 aborted");
            assertContains(rig.nextCallThrows(1, Result.INTERNAL_ERROR), "injected");
            rig.healthyStillWorks(rep.getCurrentRepetition());
        }
    }

    @RepeatedTest(50)
    void aCopyThatFails(RepetitionInfo rep) {
        try (FaultRig rig = new FaultRig(ERRORS)) {
            // rank 0's first device-to-host copy into a staging slot fails, as a CUDA copy would
            rig.faults.set(HostFaults.targeting(0, "pcie.send", HostFaults.Op.COPY, nth -> {
                throw new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "injected: cudaMemcpyAsync failed");
            }));
            // grouped: the copy fails as soon as rank 0's work runs, and its abort could refuse rank 1's call
            rig.enqueueBoth();
            assertArrayEquals(new Result[] {Result.UNHANDLED_CUDA_ERROR, Result.REMOTE_ERROR},
                    rig.errorEverywhere());
            Bounded.idle(rig.streams[0], FaultRig.BOUND);
            Bounded.idle(rig.streams[1], FaultRig.BOUND);
            assertContains(rig.nextCallThrows(0, Result.UNHANDLED_CUDA_ERROR), "cudaMemcpyAsync");
            assertPeerAbort(rig.nextCallThrows(1, Result.REMOTE_ERROR), "rank 0 aborted");
            rig.healthyStillWorks(rep.getCurrentRepetition());
        }
    }

    @RepeatedTest(50)
    void aCounterThatNeverArrives(RepetitionInfo rep) {
        try (FaultRig rig = new FaultRig(STALLS)) {
            // rank 1's first "slot full" counter write is lost: rank 0 waits for it forever
            rig.faults.set(HostFaults.targeting(1, "pcie.send", HostFaults.Op.WRITE,
                    nth -> nth == 1 ? HostFaults.Action.DROP : HostFaults.Action.RUN));
            rig.enqueue(0);
            rig.enqueue(1);
            assertArrayEquals(new Result[] {Result.REMOTE_ERROR, Result.REMOTE_ERROR}, rig.errorEverywhere());
            Bounded.idle(rig.streams[0], FaultRig.BOUND);
            Bounded.idle(rig.streams[1], FaultRig.BOUND);
            // whichever rank timed out first, rank 0 names rank 1: its watchdog saw rank 1's full counter
            // behind, or rank 1 aborted first
            assertPeerAbort(rig.nextCallThrows(0, Result.REMOTE_ERROR), "rank 1");
            rig.nextCallThrows(1, Result.REMOTE_ERROR);
            rig.healthyStillWorks(rep.getCurrentRepetition());
        }
    }

    @RepeatedTest(50)
    void aRankWhoseThreadNeverEnqueues(RepetitionInfo rep) {
        try (FaultRig rig = new FaultRig(STALLS)) {
            rig.enqueue(0); // rank 1 never calls
            assertArrayEquals(new Result[] {Result.REMOTE_ERROR, Result.REMOTE_ERROR}, rig.errorEverywhere());
            Bounded.idle(rig.streams[0], FaultRig.BOUND);
            String m = rig.nextCallThrows(0, Result.REMOTE_ERROR);
            assertTrue(m.contains("watchdog") && m.contains("ALL_REDUCE") && m.contains("waiting for producer rank 1"), m);
            assertPeerAbort(rig.nextCallThrows(1, Result.REMOTE_ERROR), "rank 0 aborted");
            rig.healthyStillWorks(rep.getCurrentRepetition());
        }
    }

    @RepeatedTest(50)
    void aRankWhoseStreamsBlockForever(RepetitionInfo rep) throws Exception {
        CountDownLatch revive = new CountDownLatch(1);
        try (FaultRig rig = new FaultRig(STALLS)) {
            // every operation of rank 1's PCIe streams hangs, like a GPU that stopped answering
            rig.faults.set(HostFaults.targeting(1, "pcie.", null, nth -> {
                revive.await();
                return HostFaults.Action.RUN;
            }));
            rig.enqueue(0);
            rig.enqueue(1);
            assertArrayEquals(new Result[] {Result.REMOTE_ERROR, Result.REMOTE_ERROR}, rig.errorEverywhere());
            Bounded.idle(rig.streams[0], FaultRig.BOUND); // the healthy rank is released
            rig.nextCallThrows(0, Result.REMOTE_ERROR);
            rig.nextCallThrows(1, Result.REMOTE_ERROR);
            rig.healthyStillWorks(rep.getCurrentRepetition());
            // rank 1's caller's stream waits for its hung streams: nothing can release a stream that never
            // returns, and their memory must stay allocated until it does
            assertFalse(rig.streams[1].isIdle());
            revive.countDown();
            Bounded.idle(rig.streams[1], FaultRig.BOUND);
        } finally {
            revive.countDown();
        }
    }

    @RepeatedTest(50)
    void aDroppedRingCounterOnTheCallersStream(RepetitionInfo rep) {
        try (FaultRig rig = new FaultRig(STALLS)) {
            // the primary path (host ring) runs on the caller's stream: lose rank 0's first ring write
            rig.faults.set(HostFaults.targeting(0, "user.", HostFaults.Op.WRITE,
                    nth -> nth == 1 ? HostFaults.Action.DROP : HostFaults.Action.RUN));
            rig.enqueue(0);
            rig.enqueue(1);
            assertArrayEquals(new Result[] {Result.REMOTE_ERROR, Result.REMOTE_ERROR}, rig.errorEverywhere());
            Bounded.idle(rig.streams[0], FaultRig.BOUND);
            Bounded.idle(rig.streams[1], FaultRig.BOUND);
            rig.nextCallThrows(0, Result.REMOTE_ERROR);
            rig.nextCallThrows(1, Result.REMOTE_ERROR);
            rig.healthyStillWorks(rep.getCurrentRepetition());
        }
    }

    /**
     * A rank told of a peer's abort names the peer, or names its own wait that the abort released: the check
     * reads the abort words before the streams, and an abort landing between the two reads leaves the released
     * wait as what this rank finds (seen about once in 300 repetitions on two busy cores).
     */
    private static void assertPeerAbort(String message, String peer) {
        assertTrue(message.contains(peer) || message.contains("cancelled (communicator aborted"),
                () -> "expected \"" + peer + "\" or a wait released by the abort in: " + message);
    }

    private static void assertContains(String message, String part) {
        assertTrue(message.contains(part), () -> "expected \"" + part + "\" in: " + message);
    }
}
