package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import org.junit.jupiter.api.Test;

/**
 * What ncclConfig_t.splitShare does in FlexLink (docs/migration.md): a child never shares its parent's resources,
 * since FlexLink makes it a communicator of its own (its NCCL primary created fresh, not by ncclCommSplit), so
 * splitShare = 1 is accepted and changes nothing: the child outlives its destroyed parent and runs as before. A
 * value other than 0, 1 or NCCL_CONFIG_UNDEF_INT is ncclInvalidArgument naming it, as NCCL's. On the host
 * backend, the ranks made by {@link FacadeCreation} as the CUDA facade makes them.
 */
class FacadeSplitShareTest extends FacadeHostRanks {
    private volatile int nextDevice;

    private FacadeCreation creation() {
        return new FacadeCreation(new FacadeCreation.Maker() {
            @Override
            public int device() {
                return nextDevice;
            }

            @Override
            public FacadeComm make(long handle, int nranks, UniqueId id, int rank, int device, FacadeOptions o) {
                return new FacadeComm(handle, FlexLink.initRank(backend, CONFIG, nranks, id, rank, device), null, null,
                        o.commName(), o.blocking());
            }
        });
    }

    @Test
    void splitShareIsAcceptedAndTheChildSharesNothing() {
        FacadeOptions options;
        try (BytePointer config = new BytePointer(FacadeOptions.BYTES)) {
            FacadeOptionsTest.initializer(config.address());
            UNSAFE.putInt(config.address() + FacadeOptions.SPLIT_SHARE, 1);
            options = FacadeOptions.read(config.address());
        }
        assertEquals(NcclTuning.DEFAULT, options.tuning(), "splitShare is nothing the primary is created with");
        ncclComm[] parents = parents(options);
        ncclComm[] kids = {new ncclComm(), new ncclComm()};
        assertEquals(ncclSuccess, ncclGroupStart());
        for (int r = 0; r < 2; r++) {
            assertEquals(ncclSuccess, ncclCommSplit(parents[r], 0, r, kids[r], null));
        }
        assertEquals(ncclSuccess, ncclGroupEnd());
        Communicator[] children = new Communicator[2];
        for (int r = 0; r < 2; r++) {
            assertNotEquals(0, kids[r].address(), "rank " + r);
            children[r] = NcclFacade.lookup(kids[r]).comm;
            assertNotEquals(NcclFacade.lookup(parents[r]).comm, children[r]);
        }
        for (ncclComm p : parents) {
            assertEquals(ncclSuccess, ncclCommDestroy(p)); // a sharing child would lose its resources here
        }
        for (ncclComm p : parents) {
            assertNull(NcclFacade.lookup(p));
        }
        try (CollectiveHarness h = new CollectiveHarness(backend, children)) {
            for (Collective c : new Collective[] {Collective.ALL_REDUCE, Collective.ALL_GATHER}) {
                CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 20_011, 0, false, 17);
                assertEquals(0, o.wrong, c + " on the child after its parent was destroyed: " + o);
            }
        }
        for (ncclComm k : kids) {
            assertEquals(ncclSuccess, ncclCommDestroy(k));
        }
    }

    @Test
    void aSplitShareOtherThanZeroOrOneIsRefusedNamingIt() {
        try (BytePointer config = new BytePointer(FacadeOptions.BYTES)) {
            FacadeOptionsTest.initializer(config.address());
            UNSAFE.putInt(config.address() + FacadeOptions.SPLIT_SHARE, 2);
            ncclComm comm = new ncclComm();
            assertEquals(ncclInvalidArgument, FacadeInit.initRankConfig(comm, 2, null, 0, config));
            assertEquals(0, comm.address(), "nothing made");
            String last = ncclGetLastError(null).getString();
            assertTrue(last.contains("config.splitShare: 2"), last);
        }
    }

    /** Two ranks made in one group with {@code options}, as ncclCommInitRankConfig makes them. */
    private ncclComm[] parents(FacadeOptions options) {
        FacadeCreation creation = creation();
        byte[] id = FlexLink.getUniqueIdForProcesses(CONFIG).toBytes();
        ncclComm[] parents = new ncclComm[2];
        assertEquals(ncclSuccess, ncclGroupStart());
        for (int r = 0; r < 2; r++) {
            long[] h = new long[1];
            nextDevice = r;
            assertEquals(ncclSuccess, creation.initRank(h, 2, id, r, options));
            parents[r] = new ncclComm();
            NcclFacade.setAddress(parents[r], h[0]);
        }
        assertEquals(ncclSuccess, ncclGroupEnd());
        return parents;
    }

    /**
     * ncclCommSplit's own config (FlexNccl hands it to FacadeSplit.split, called here with a plain pointer: the
     * config's class needs NCCL's library to load) is read as ncclCommInitRankConfig's: its commName names the child (a NULL config
     * keeps the parent's), and a bad field is ncclInvalidArgument naming it, with no child and the parent as it was.
     */
    @Test
    void aSplitsConfigNamesTheChildAndABadOneIsRefusedNamingTheField() {
        ncclComm[] parents = parents(FacadeOptions.DEFAULT);
        try (BytePointer bad = new BytePointer(FacadeOptions.BYTES); BytePointer named = new BytePointer(FacadeOptions.BYTES);
             BytePointer name = new BytePointer("tensor-parallel")) {
            FacadeOptionsTest.initializer(bad.address());
            UNSAFE.putInt(bad.address() + FacadeOptions.SPLIT_SHARE, 3);
            for (int r = 0; r < 2; r++) {
                ncclComm kid = new ncclComm();
                assertEquals(ncclInvalidArgument, FacadeSplit.split(parents[r], 0, r, FacadeSplit.into(kid), bad));
                assertEquals(0, kid.address(), "no child for rank " + r);
                String last = ncclGetLastError(null).getString();
                assertTrue(last.contains("config.splitShare: 3"), last);
            }
            FacadeOptionsTest.initializer(named.address());
            UNSAFE.putLong(named.address() + FacadeOptions.COMM_NAME, name.address());
            ncclComm[] kids = {new ncclComm(), new ncclComm()};
            assertEquals(ncclSuccess, ncclGroupStart());
            assertEquals(ncclSuccess, FacadeSplit.split(parents[0], 0, 0, FacadeSplit.into(kids[0]), named));
            assertEquals(ncclSuccess, ncclCommSplit(parents[1], 0, 1, kids[1], null));
            assertEquals(ncclSuccess, ncclGroupEnd());
            assertEquals("tensor-parallel", NcclFacade.lookup(kids[0]).name, "the config's commName");
            assertEquals(NcclFacade.lookup(parents[1]).name, NcclFacade.lookup(kids[1]).name, "the parent's");
            try (CollectiveHarness h = new CollectiveHarness(backend, new Communicator[] {
                    NcclFacade.lookup(parents[0]).comm, NcclFacade.lookup(parents[1]).comm})) {
                CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 4099, 0, false, 5);
                assertEquals(0, o.wrong, "the parents after the refused split: " + o);
            }
            for (ncclComm c : new ncclComm[] {kids[0], kids[1], parents[0], parents[1]}) {
                assertEquals(ncclSuccess, ncclCommDestroy(c));
            }
        }
    }
}
