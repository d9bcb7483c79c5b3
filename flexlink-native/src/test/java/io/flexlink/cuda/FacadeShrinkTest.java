package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.NativeMemory;
import io.flexlink.testing.CollectiveHarness;
import java.nio.IntBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Test;

/**
 * ncclCommShrink through the facade without a GPU: one thread shrinks four host-backend ranks inside a group
 * through every overload (the excluded rank calls too and gets NULL), the children exact over their own paths;
 * a non-blocking parent's shrink answers ncclInProgress and the children are polled to ncclSuccess; a config's
 * blocking = 0 does the same for a blocking parent; NCCL_SHRINK_ABORT revokes the parents first; every bad
 * argument is ncclInvalidArgument naming it, with NULL written and nothing started.
 */
class FacadeShrinkTest extends FacadeHostRanks {

    /** The children behind {@code kids}, by child rank, each of {@code size} ranks; every collective exact. */
    private Communicator[] exactChildren(ncclComm[] kids, int size, String what) {
        Communicator[] byRank = new Communicator[size];
        for (ncclComm k : kids) {
            if (k != null && k.address() != 0) {
                Communicator c = NcclFacade.lookup(k).comm;
                assertEquals(size, c.size());
                byRank[c.rank()] = c;
            }
        }
        try (CollectiveHarness h = new CollectiveHarness(backend, byRank)) {
            for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.BROADCAST}) {
                CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 7_001, size - 1, false, 3);
                assertEquals(0, o.wrong, what + " " + c + ": " + o);
            }
        }
        return byRank;
    }

    private static void destroy(ncclComm... hs) {
        for (ncclComm h : hs) {
            if (h != null && h.address() != 0) {
                assertEquals(ncclSuccess, ncclCommDestroy(h));
            }
        }
    }

    @Test
    @SuppressWarnings("rawtypes")
    void oneThreadShrinksEveryRankInsideAGroupThroughEveryOverload() {
        ncclComm[] parents = handles(FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3), true);
        int[] list = {1};
        ncclComm[] kids = new ncclComm[4];
        PointerPointer slots = new PointerPointer(4);
        try (IntPointer native1 = new IntPointer(7, 1)) {
            native1.position(1); // the list starts at the pointer's position, as a C int* would
            assertEquals(ncclSuccess, ncclGroupStart());
            kids[0] = new ncclComm();
            NcclFacade.setAddress(kids[0], 0x1234); // overwritten with NULL at once, as NCCL does
            assertEquals(ncclSuccess, ncclCommShrink(parents[0], list, 1, kids[0], null, NCCL_SHRINK_DEFAULT));
            assertEquals(0, kids[0].address(), "NULL until the group ends");
            slots.position(1);
            assertEquals(ncclSuccess, ncclCommShrink(parents[1], IntBuffer.wrap(new int[] {9, 1}).position(1), 1,
                    slots, null, NCCL_SHRINK_DEFAULT), "the excluded rank takes part");
            kids[2] = new ncclComm();
            assertEquals(ncclSuccess, ncclCommShrink(parents[2], native1, 1, kids[2], null, NCCL_SHRINK_DEFAULT));
            slots.position(3);
            assertEquals(ncclSuccess, ncclCommShrink(parents[3], list, 1, slots, null, NCCL_SHRINK_DEFAULT));
            slots.position(0);
            assertEquals(ncclSuccess, ncclGroupEnd());
        }
        assertEquals(null, slots.get(1), "the excluded rank gets NULL");
        kids[3] = new ncclComm(slots.get(3));
        Communicator[] children = exactChildren(kids, 3, "shrunk in a group");
        int[] parentOf = {0, 2, 3};
        for (int i = 0; i < 3; i++) {
            assertEquals(parentOf[i], children[i].device(), "child " + i + ": the kept ranks in their order");
        }
        destroy(parents);
        destroy(kids);
        slots.close();
        assertEquals(0, backend.liveBytes());
    }

    @Test
    void aNonBlockingParentsShrinkIsPolledToSuccess() {
        ncclComm[] parents = handles(FlexLink.initAll(backend, CONFIG, 0, 1, 2), false);
        ncclComm[] kids = new ncclComm[3];
        for (int r = 0; r < 3; r++) { // one thread, no group: each call starts its rank's part and returns
            kids[r] = new ncclComm();
            int rc = ncclCommShrink(parents[r], new int[] {0}, 1, kids[r], null, NCCL_SHRINK_DEFAULT);
            assertEquals(r == 0 ? ncclSuccess : ncclInProgress, rc, "rank " + r);
            assertEquals(r == 0, kids[r].address() == 0, "a handle at once, NULL for the excluded rank");
        }
        for (int r = 1; r < 3; r++) {
            assertEquals(ncclSuccess, pollUntilDone(kids[r]));
            assertTrue(!NcclFacade.lookup(kids[r]).blocking, "the child inherits blocking = 0");
        }
        exactChildren(kids, 2, "shrunk without blocking");
        destroy(kids);
        destroy(parents);
    }

    @Test
    void aConfigsBlockingZeroAndAbortFirstAreHonoured() {
        ncclComm[] parents = handles(FlexLink.initAll(backend, CONFIG, 0, 1, 2), true);
        // an ncclConfig_t in plain memory (bytedeco's struct class needs CUDA to load), through the facade's own path
        BytePointer config = new BytePointer(FacadeOptions.BYTES);
        FacadeOptionsTest.initializer(config.address());
        NativeMemory.UNSAFE.putInt(config.address() + FacadeOptions.BLOCKING, 0);
        ncclComm[] kids = new ncclComm[3];
        for (int r = 0; r < 3; r++) {
            kids[r] = new ncclComm();
            assertEquals(r == 2 ? ncclSuccess : ncclInProgress, FacadeShrink.shrink(parents[r], new int[] {2}, 1,
                    FacadeSplit.into(kids[r]), config, NCCL_SHRINK_ABORT));
        }
        for (int r = 0; r < 2; r++) {
            assertEquals(ncclSuccess, pollUntilDone(kids[r]));
        }
        exactChildren(kids, 2, "shrunk with NCCL_SHRINK_ABORT");
        for (ncclComm p : parents) {
            assertEquals(ncclSuccess, asyncError(p), "revoked and quiescent");
            assertEquals(ncclInvalidArgument, ncclCommRevoke(p, NCCL_REVOKE_DEFAULT), "revoked by the shrink");
            assertEquals(ncclSuccess, asyncError(p), "a refused revoke changes nothing");
        }
        destroy(kids);
        destroy(parents);
        config.close();
    }

    @Test
    void badArgumentsAreInvalidArgumentsNamingThemWithNothingStarted() {
        ncclComm[] parents = handles(FlexLink.initAll(backend, CONFIG, 0, 1), true);
        ncclComm out = new ncclComm();
        BytePointer badMagic = new BytePointer(FacadeOptions.BYTES);
        FacadeOptionsTest.initializer(badMagic.address());
        NativeMemory.UNSAFE.putInt(badMagic.address() + FacadeOptions.MAGIC_AT, 0x1234);
        Object[][] bad = {
            {new ncclComm(), new int[] {1}, 1, null, 0, "comm: NULL"},
            {parents[0], null, 1, null, 0, "excludeRanksList: NULL"},
            {parents[0], new IntPointer(), 1, null, 0, "excludeRanksList: NULL"},
            {parents[0], new int[] {1}, 0, null, 0, "excludeRanksCount: 0"},
            {parents[0], new int[] {1}, 2, null, 0, "excludeRanksCount: 2 is more than"},
            {parents[0], new int[] {2}, 1, null, 0, "excluded: rank 2 is not in [0, 2)"},
            {parents[0], new int[] {0, 1}, 2, null, 0, "excluded: every rank"},
            {parents[0], new int[] {1}, 1, null, 2, "shrinkFlags: 0x2"},
            {parents[0], new int[] {1}, 1, badMagic, 0, "config.magic: 0x1234"},
        };
        assertEquals(ncclSuccess, ncclGroupStart()); // inside a group too: nothing is recorded
        for (Object[] b : bad) {
            NcclFacade.setAddress(out, 0x99);
            int rc = b[3] != null ? FacadeShrink.shrink((ncclComm) b[0], b[1], (int) b[2], FacadeSplit.into(out),
                    (BytePointer) b[3], (int) b[4])
                    : b[1] instanceof IntPointer p ? ncclCommShrink((ncclComm) b[0], p, (int) b[2], out, null, (int) b[4])
                    : ncclCommShrink((ncclComm) b[0], (int[]) b[1], (int) b[2], out, null, (int) b[4]);
            assertEquals(ncclInvalidArgument, rc, (String) b[5]);
            assertEquals(0, out.address(), "NULL written: " + b[5]);
            String last = ncclGetLastError(null).getString();
            assertTrue(last.contains((String) b[5]), b[5] + " in " + last);
        }
        assertEquals(ncclInvalidArgument, ncclCommShrink(parents[0], new int[] {1}, 1, (ncclComm) null, null, 0));
        assertEquals(ncclInvalidArgument, ncclCommShrink(parents[0], new int[] {1}, 1, new PointerPointer<>(), null,
                0));
        assertEquals(ncclSuccess, ncclGroupEnd(), "nothing was recorded for the group's end");
        for (ncclComm p : parents) {
            assertEquals(ncclSuccess, asyncError(p), "nothing changed");
            assertNotEquals(null, NcclFacade.lookup(p));
        }
        destroy(parents);
        badMagic.close();
    }
}
