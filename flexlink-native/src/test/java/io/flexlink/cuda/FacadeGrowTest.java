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
import io.flexlink.UniqueId;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import io.flexlink.testing.CollectiveHarness;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.BytePointer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ncclCommGetUniqueId and ncclCommGrow through the facade without a GPU: one thread grows two non-blocking
 * host-backend ranks to four (the root with its id, the other existing rank with NULL, two new ranks with a NULL
 * comm through a host-backend {@link FacadeCreation}), every handle polled to ncclSuccess, the grown communicator
 * exact; one id at a time; NCCL's checks in NCCL's order, each ncclInvalidArgument naming the argument.
 */
class FacadeGrowTest extends FacadeHostRanks {
    private FacadeCreation creation;

    @BeforeEach
    void open() {
        creation = new FacadeCreation(new FacadeCreation.Maker() {
            @Override
            public int device() {
                return 0; // not used: make() puts each new rank on the device of its own number
            }

            @Override
            public FacadeComm make(long handle, int nranks, UniqueId id, int rank, int device, FacadeOptions o) {
                return new FacadeComm(handle, FlexLink.initRank(backend, CONFIG, nranks, id, rank, rank), null, null,
                        o.commName(), o.blocking());
            }
        });
    }

    /** A non-blocking config (blocking = 0) in plain memory, as NCCL_CONFIG_INITIALIZER lays it out. */
    private static BytePointer nonBlocking() {
        BytePointer p = new BytePointer(FacadeOptions.BYTES);
        FacadeOptionsTest.initializer(p.address());
        io.flexlink.runtime.NativeMemory.UNSAFE.putInt(p.address() + FacadeOptions.BLOCKING, 0);
        return p;
    }

    @Test
    void oneThreadGrowsTwoRanksToFour() {
        ncclComm[] world = handles(FlexLink.initAll(backend, CONFIG, 0, 1), false);
        ncclComm[] grown = {new ncclComm(), new ncclComm(), new ncclComm(), new ncclComm()};
        try (BytePointer id = new BytePointer(NCCL_UNIQUE_ID_BYTES); BytePointer config = nonBlocking()) {
            assertEquals(ncclSuccess, FacadeGrow.uniqueId(world[0], id));
            try (BytePointer again = new BytePointer(NCCL_UNIQUE_ID_BYTES)) {
                assertEquals(ncclInvalidUsage, FacadeGrow.uniqueId(world[0], again), "one unconsumed id at a time");
            }
            assertEquals(ncclInProgress, FacadeGrow.grow(world[0], 4, id, -1, FacadeSplit.into(grown[0]), null,
                    creation), "the root, non-blocking as its parent");
            assertEquals(ncclInProgress, FacadeGrow.grow(world[1], 4, null, -1, FacadeSplit.into(grown[1]), null,
                    creation));
            for (int r = 2; r < 4; r++) {
                assertEquals(ncclInProgress, FacadeGrow.grow(null, 4, id, r, FacadeSplit.into(grown[r]), config,
                        creation), "new rank " + r);
            }
        }
        Communicator[] comms = new Communicator[4];
        for (int r = 0; r < 4; r++) {
            assertNotEquals(0, grown[r].address(), "a handle at once");
            assertEquals(ncclSuccess, pollUntilDone(grown[r]));
            int[] v = {-1};
            assertEquals(ncclSuccess, ncclCommUserRank(grown[r], v));
            assertEquals(r, v[0], "existing ranks keep theirs");
            assertEquals(ncclSuccess, ncclCommCount(grown[r], v));
            assertEquals(4, v[0]);
            comms[r] = NcclFacade.lookup(grown[r]).comm;
        }
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 9_001, 0,
                    false, 7);
            assertEquals(0, o.wrong, o.toString());
        }
        for (ncclComm c : grown) {
            assertEquals(ncclSuccess, ncclCommDestroy(c));
        }
        for (ncclComm c : world) {
            assertEquals(ncclSuccess, ncclCommDestroy(c));
        }
    }

    @Test
    void badArgumentsAreInvalidArgumentsInNcclsOrder() {
        ncclComm[] world = handles(FlexLink.initAll(backend, CONFIG, 0, 1), true);
        ncclComm out = new ncclComm();
        try (BytePointer id = new BytePointer(NCCL_UNIQUE_ID_BYTES)) {
            id.put(FlexLink.getUniqueIdForProcesses(CONFIG).toBytes(), 0, NCCL_UNIQUE_ID_BYTES);
            Object[][] bad = {{world[0], 0, id, -1, "nRanks: 0"}, {world[0], 2, id, -1, "nRanks: 2 is not more than"},
                {world[0], 3, id, 0, "rank: 0; an existing rank passes -1"},
                {null, 3, null, 2, "uniqueId: NULL; a new rank joins"}};
            for (Object[] b : bad) {
                NcclFacade.setAddress(out, 0x77);
                assertEquals(ncclInvalidArgument, FacadeGrow.grow((ncclComm) b[0], (int) b[1], (BytePointer) b[2],
                        (int) b[3], FacadeSplit.into(out), null, creation), (String) b[4]);
                assertEquals(0, out.address(), "NULL written: " + b[4]);
                String last = ncclGetLastError(null).getString();
                assertTrue(last.contains((String) b[4]), b[4] + " in " + last);
            }
            assertEquals(ncclInvalidArgument, ncclCommGrow(world[0], 3, null, -1, (ncclComm) null, null), "NULL newcomm");
            assertEquals(ncclInvalidArgument, FacadeGrow.uniqueId(world[0], null));
            assertEquals(ncclInvalidArgument, FacadeGrow.uniqueId(new ncclComm(), id));
        }
        for (ncclComm c : world) {
            assertEquals(ncclSuccess, ncclCommDestroy(c));
        }
    }
}
