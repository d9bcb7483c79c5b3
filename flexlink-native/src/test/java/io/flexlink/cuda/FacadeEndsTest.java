package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.testing.CollectiveHarness;
import org.bytedeco.cuda.nccl.ncclComm;
import org.junit.jupiter.api.Test;

/**
 * ncclCommFinalize and ncclCommRevoke through the facade without a GPU: host-backend communicators registered as
 * facade handles (blocking and non-blocking), NCCL's codes for NULL, bad flags and a second end, the deferral of a
 * grouped finalize to ncclGroupEnd, ncclInProgress then ncclSuccess through ncclCommGetAsyncError for a
 * non-blocking communicator, and what each state still allows (collectives refused with ncclInvalidUsage through
 * the communicator behind the handle; a revoked one splits).
 */
class FacadeEndsTest extends FacadeHostRanks {

    private static Communicator comm(ncclComm h) {
        return NcclFacade.lookup(h).comm;
    }

    /** The communicator behind {@code h} refuses a collective with {@code result}, naming {@code text}. */
    private void collectiveRefused(ncclComm h, int result, String text) {
        try (CollectiveHarness harness = new CollectiveHarness(backend, new Communicator[] {comm(h)})) {
            FlexLinkException e = assertThrows(FlexLinkException.class, () -> CollectiveHarness.enqueue(
                    Collective.ALL_REDUCE, comm(h), 0, 0, 1, DataType.FLOAT32, ReduceOp.SUM, 0, harness.stream(0)));
            assertEquals(result, e.result().code(), e.getMessage());
            assertTrue(e.getMessage().contains(text), e.getMessage());
        }
    }

    private void exact(Communicator[] comms, String what) {
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 9_001, 0, false,
                    5);
            assertEquals(0, o.wrong, what + ": " + o);
        }
    }

    private static void destroy(ncclComm... hs) {
        for (ncclComm h : hs) {
            assertEquals(ncclSuccess, ncclCommDestroy(h));
        }
    }

    @Test
    void nullIsASuccessAndAnUnknownHandleAnInvalidArgument() {
        assertEquals(ncclSuccess, ncclCommFinalize(null));
        assertEquals(ncclSuccess, ncclCommFinalize(new ncclComm()));
        assertEquals(ncclSuccess, ncclCommRevoke(null, NCCL_REVOKE_DEFAULT));
        ncclComm unknown = new ncclComm();
        NcclFacade.setAddress(unknown, NcclFacade.HANDLE_TAG | 0x7FFF_FFF0L); // never handed out
        assertEquals(ncclInvalidArgument, ncclCommFinalize(unknown));
        assertEquals(ncclInvalidArgument, ncclCommRevoke(unknown, NCCL_REVOKE_DEFAULT));
        NcclFacade.setAddress(unknown, 0);
    }

    @Test
    void finalizeFlushesThenOnlyDestroyIsAllowed() {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, true);
        exact(world, "before the finalize");
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, ncclCommFinalize(c));
        }
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, asyncError(c));
            collectiveRefused(c, ncclInvalidUsage, "finalized");
            assertEquals(ncclInvalidArgument, ncclCommFinalize(c), "a second finalize");
            assertTrue(ncclGetLastError(null).getString().contains("finalized or revoked already"));
            assertEquals(ncclInvalidArgument, ncclCommRevoke(c, NCCL_REVOKE_DEFAULT), "a revoke after a finalize");
            int[] n = {0};
            assertEquals(ncclSuccess, ncclCommCount(c, n), "queries still answer");
            assertEquals(2, n[0]);
        }
        destroy(h);
        assertEquals(ncclInvalidArgument, ncclCommFinalize(h[0]), "destroyed");
        assertEquals(0, backend.liveBytes());
    }

    @Test
    void aGroupedFinalizeRunsAtTheGroupsEnd() {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, true);
        assertEquals(ncclSuccess, ncclGroupStart());
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, ncclCommFinalize(c));
        }
        assertEquals(ncclInvalidArgument, ncclCommFinalize(h[0]), "the second is refused at the call");
        assertEquals(ncclInProgress, asyncError(h[0]), "recorded, not run: NCCL defers it to the group's end");
        int[] v = {-1};
        assertEquals(ncclInvalidArgument, ncclCommCount(h[0], v), "a query answers the async error first, as NCCL's");
        assertEquals(-1, v[0]);
        assertEquals(ncclSuccess, ncclGroupEnd());
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, asyncError(c));
            assertEquals(ncclSuccess, ncclCommCount(c, v), "finalized: its count is still there");
            assertEquals(2, v[0]);
            collectiveRefused(c, ncclInvalidUsage, "finalized");
        }
        destroy(h);
    }

    @Test
    void aNonBlockingFinalizeIsInProgressThenSuccess() {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, false);
        exact(world, "before the finalize");
        for (ncclComm c : h) {
            assertEquals(ncclInProgress, ncclCommFinalize(c));
        }
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, pollUntilDone(c));
            collectiveRefused(c, ncclInvalidUsage, "finalized");
        }
        destroy(h);
        assertEquals(0, backend.liveBytes());
    }

    @Test
    void revokeStopsTheWorkThenSplitAndDestroyAreAllowed() {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2);
        ncclComm[] h = handles(world, true);
        assertEquals(ncclInvalidArgument, ncclCommRevoke(h[0], 1), "revokeFlags other than NCCL_REVOKE_DEFAULT");
        assertTrue(ncclGetLastError(null).getString().contains("revokeFlags: 1"), ncclGetLastError(null).getString());
        assertEquals(ncclSuccess, asyncError(h[0]), "a refused revoke changes nothing");
        exact(world, "after the refused revoke");
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, ncclCommRevoke(c, NCCL_REVOKE_DEFAULT));
        }
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, pollUntilDone(c));
            collectiveRefused(c, ncclInvalidUsage, "revoked");
            assertEquals(ncclInvalidArgument, ncclCommRevoke(c, NCCL_REVOKE_DEFAULT), "a second revoke");
            assertEquals(ncclInvalidArgument, ncclCommFinalize(c), "a finalize after a revoke");
        }
        ncclComm[] kids = new ncclComm[3];
        assertEquals(ncclSuccess, ncclGroupStart());
        for (int r = 0; r < 3; r++) {
            kids[r] = new ncclComm();
            assertEquals(ncclSuccess, ncclCommSplit(h[r], 0, r, kids[r], null), "a revoked communicator splits");
        }
        assertEquals(ncclSuccess, ncclGroupEnd());
        Communicator[] children = new Communicator[3];
        for (int r = 0; r < 3; r++) {
            assertNotEquals(0, kids[r].address());
            children[r] = comm(kids[r]);
        }
        exact(children, "the child of a revoked communicator");
        destroy(h);
        destroy(kids);
        assertEquals(0, backend.liveBytes());
    }

    @Test
    void aFailedCallsTextIsReadFromAnyThreadAsNcclsOneGlobalText() throws InterruptedException {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, true);
        int[] rc = new int[1];
        Thread other = new Thread(() -> rc[0] = ncclCommRevoke(h[0], 7), "another-thread");
        other.start();
        other.join();
        assertEquals(ncclInvalidArgument, rc[0]);
        String text = ncclGetLastError(null).getString();
        assertTrue(text.contains("revokeFlags: 7"), "the other thread's refusal, read here: " + text);
        assertEquals(ncclInvalidArgument, ncclCommRevoke(h[1], 9));
        assertTrue(ncclGetLastError(h[0]).getString().contains("revokeFlags: 9"), "the latest call's, for any handle");
        destroy(h);
    }

    @Test
    void aNonBlockingRevokeIsInProgressThenSuccess() {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, false);
        for (ncclComm c : h) {
            assertEquals(ncclInProgress, ncclCommRevoke(c, NCCL_REVOKE_DEFAULT));
        }
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, pollUntilDone(c));
            assertEquals(Result.SUCCESS, comm(c).getAsyncError(), "quiescent");
        }
        destroy(h);
    }
}
