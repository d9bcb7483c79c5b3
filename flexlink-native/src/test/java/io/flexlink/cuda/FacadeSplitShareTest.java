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
}
