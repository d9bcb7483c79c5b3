package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Test;

/**
 * ncclCommSplit through the facade without a GPU: host-backend communicators registered as facade handles,
 * split by one thread inside a group (the splits run at ncclGroupEnd, as NCCL's), both output kinds, NULL for
 * NCCL_SPLIT_NOCOLOR, the child into the parent's own object, and NCCL's codes for bad arguments.
 */
class FacadeSplitTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "4")
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s").build();

    private static ncclComm handle(Communicator c) {
        ncclComm h = new ncclComm();
        NcclFacade.setAddress(h, NcclFacade.register(c, null, null));
        return h;
    }

    private static int query(int which, ncclComm c) {
        int[] v = {-7};
        int rc = which == 0 ? ncclCommCount(c, v) : which == 1 ? ncclCommUserRank(c, v) : ncclCommCuDevice(c, v);
        assertEquals(ncclSuccess, rc);
        return v[0];
    }

    @Test
    @SuppressWarnings("rawtypes")
    void oneThreadSplitsEveryRankInsideAGroup() {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3);
            ncclComm[] parents = new ncclComm[4];
            for (int r = 0; r < 4; r++) {
                parents[r] = handle(world[r]);
            }
            ncclComm[] kids = new ncclComm[4];
            PointerPointer slots = new PointerPointer(4);
            assertEquals(ncclSuccess, ncclGroupStart());
            for (int r = 0; r < 4; r++) {
                if (r % 2 == 0) { // both overloads: a ncclComm output and a ncclComm_t* slot
                    kids[r] = new ncclComm();
                    NcclFacade.setAddress(kids[r], 0x1234); // overwritten with NULL at once, as NCCL does
                    assertEquals(ncclSuccess, ncclCommSplit(parents[r], r % 2, -r, kids[r], null));
                    assertEquals(0, kids[r].address(), "NULL until the group ends");
                } else {
                    slots.position(r);
                    assertEquals(ncclSuccess, ncclCommSplit(parents[r], r % 2, -r, slots, null));
                    slots.position(0);
                }
            }
            assertEquals(ncclSuccess, ncclGroupEnd());
            for (int r = 1; r < 4; r += 2) {
                kids[r] = new ncclComm(slots.get(r));
            }
            Communicator[][] byColor = new Communicator[2][2];
            for (int r = 0; r < 4; r++) {
                assertNotEquals(0, kids[r].address(), "rank " + r);
                assertEquals(2, query(0, kids[r]));
                assertEquals(1 - r / 2, query(1, kids[r]), "keys -r reverse the order");
                assertEquals(r, query(2, kids[r]), "the parent's device");
                byColor[r % 2][1 - r / 2] = NcclFacade.lookup(kids[r]).comm;
            }
            for (Communicator[] pair : byColor) {
                try (CollectiveHarness h = new CollectiveHarness(backend, pair)) {
                    for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.ALL_GATHER}) {
                        CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 5_001, 0, false, 8);
                        assertEquals(0, o.wrong, c + ": " + o);
                    }
                }
            }
            // NCCL_SPLIT_NOCOLOR: rank 3 gets NULL, the others a child of three
            ncclComm[] third = new ncclComm[4];
            assertEquals(ncclSuccess, ncclGroupStart());
            for (int r = 0; r < 4; r++) {
                third[r] = new ncclComm();
                assertEquals(ncclSuccess, ncclCommSplit(parents[r], r == 3 ? NCCL_SPLIT_NOCOLOR : 4, 0, third[r], null));
            }
            assertEquals(ncclSuccess, ncclGroupEnd());
            assertEquals(0, third[3].address());
            for (int r = 0; r < 3; r++) {
                assertEquals(3, query(0, third[r]));
                assertEquals(r, query(1, third[r]));
                assertEquals(ncclSuccess, ncclCommDestroy(third[r]));
            }
            // parents first, then the children: they are independent
            for (int r = 0; r < 4; r++) {
                assertEquals(ncclSuccess, ncclCommDestroy(parents[r]));
            }
            for (int r = 0; r < 4; r++) {
                assertEquals(ncclSuccess, ncclCommDestroy(kids[r]));
            }
            slots.close();
        }
    }

    /**
     * C passes {@code comm} by value, so {@code ncclCommSplit(c, color, key, &c, NULL)} splits c and puts the
     * child into the same variable; here the same {@code ncclComm} object is both arguments.
     */
    @Test
    void theChildMayGoIntoTheParentsOwnObject() {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            ncclComm c = handle(FlexLink.initAll(backend, CONFIG, 0)[0]);
            ncclComm parent = new ncclComm();
            NcclFacade.setAddress(parent, c.address());
            assertEquals(ncclSuccess, ncclCommSplit(c, 0, 0, c, null));
            assertNotEquals(parent.address(), c.address(), "c holds the child now");
            assertEquals(1, query(0, c));
            assertEquals(1, query(0, parent), "the parent is still there");
            assertEquals(ncclSuccess, ncclCommDestroy(c));
            assertEquals(ncclSuccess, ncclCommDestroy(parent));
        }
    }

    @Test
    void badArgumentsGetNcclsCodes() {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            ncclComm one = handle(FlexLink.initAll(backend, CONFIG, 0)[0]);
            ncclComm out = new ncclComm();
            assertEquals(ncclInvalidArgument, ncclCommSplit(one, -2, 0, out, null), "color below NOCOLOR");
            assertEquals(0, out.address());
            assertEquals(ncclInvalidArgument, ncclCommSplit(one, 0, 0, (ncclComm) null, null), "NULL newcomm");
            assertEquals(ncclInvalidArgument, ncclCommSplit(one, 0, 0, new PointerPointer<>(), null), "NULL slot");
            assertEquals(ncclInvalidArgument, ncclCommSplit(new ncclComm(), 0, 0, out, null), "NULL comm");
            assertEquals(ncclSuccess, ncclCommSplit(one, 0, 0, out, null), "one rank splits alone");
            assertEquals(1, query(0, out));
            assertEquals(ncclSuccess, ncclCommDestroy(out));
            assertEquals(ncclSuccess, ncclCommDestroy(one));
            assertEquals(ncclInvalidArgument, ncclCommSplit(one, 0, 0, out, null), "a destroyed parent");
        }
    }
}
