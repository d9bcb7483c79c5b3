package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.launch.Groups;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import java.nio.IntBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Test;

/** The facade answers with result codes, never exceptions; where CUDA is absent too. */
class FlexNcclNoGpuTest {

    @Test
    void initAllReturnsAnErrorCode() {
        assumeFalse(CudaLibraries.available(), "CUDA is available here");
        try (PointerPointer<?> comms = new PointerPointer<>(2)) {
            assertEquals(ncclSystemError, ncclCommInitAll(comms, 2, new int[] {0, 1}));
        }
        ncclComm one = new ncclComm();
        assertEquals(ncclSystemError, ncclCommInitAll(one, 1, (int[]) null));
        assertEquals(0, one.address());
        assertEquals(ncclInvalidArgument, ncclCommInitAll(one, 2, new int[] {0})); // devlist too short
        assertEquals(ncclSystemError, ncclGetVersion(new int[1]));
    }

    @Test
    void callsOnUnknownCommunicatorsAreInvalidArguments() {
        ncclComm bogus = new ncclComm();
        assertEquals(ncclInvalidArgument, ncclAllReduce(null, null, 1, ncclFloat, ncclSum, bogus, null));
        assertEquals(ncclInvalidArgument, ncclAllReduce(null, null, 1, ncclFloat, ncclSum, null, null));
        assertEquals(ncclInvalidArgument, ncclSend(null, 1, ncclFloat, 0, bogus, null));
        assertEquals(ncclInvalidArgument, ncclCommCount(bogus, new int[1]));
        // NCCL's ncclCommDestroy(NULL) and ncclCommAbort(NULL) are no-ops that succeed
        assertEquals(ncclSuccess, ncclCommDestroy(bogus));
        assertEquals(ncclSuccess, ncclCommDestroy(null));
        assertEquals(ncclSuccess, ncclCommAbort(bogus));
        assertEquals(ncclSuccess, ncclCommAbort(null));
        ncclComm unknown = new ncclComm();
        NcclFacade.setAddress(unknown, NcclFacade.HANDLE_TAG | 0x7FFF_FFFFL); // a handle never handed out
        assertEquals(ncclInvalidArgument, ncclCommDestroy(unknown));
        assertEquals(ncclInvalidArgument, ncclCommAbort(unknown));
        NcclFacade.setAddress(unknown, 0);
    }

    @Test
    void nullOrEmptyOutputsAreInvalidArgumentsNotExceptions() {
        assertEquals(ncclInvalidArgument, ncclGetVersion((IntPointer) null));
        assertEquals(ncclInvalidArgument, ncclGetVersion(new IntPointer())); // address 0: NCCL's NULL
        assertEquals(ncclInvalidArgument, ncclGetVersion((IntBuffer) null));
        assertEquals(ncclInvalidArgument, ncclGetVersion(IntBuffer.allocate(0)));
        assertEquals(ncclInvalidArgument, ncclGetVersion(IntBuffer.allocate(1).asReadOnlyBuffer()));
        assertEquals(ncclInvalidArgument, ncclGetVersion((int[]) null));
        assertEquals(ncclInvalidArgument, ncclGetVersion(new int[0]));
        try (IntPointer v = new IntPointer(1)) {
            int rc = ncclGetVersion(v);
            assertEquals(CudaLibraries.ncclAvailable() ? ncclSuccess : ncclSystemError, rc);
        }
    }

    /** Queries of a registered communicator (a host-backend one: no CUDA needed) with every kind of output. */
    @Test
    void queriesAnswerThroughEveryOutputKindAndRefuseNullOnes() {
        try (HostBackend backend = new HostBackend(FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "2")
                .build())) {
            Communicator[] comms = FlexLink.initAll(backend, backend.config(), 0, 1);
            ncclComm comm = new ncclComm();
            NcclFacade.setAddress(comm, NcclFacade.register(comms[1], null, null));
            try {
                assertEquals(ncclInvalidArgument, ncclCommCount(comm, new IntPointer()));
                assertEquals(ncclInvalidArgument, ncclCommCount(comm, (IntPointer) null));
                assertEquals(ncclInvalidArgument, ncclCommUserRank(comm, IntBuffer.allocate(0)));
                assertEquals(ncclInvalidArgument, ncclCommCuDevice(comm, IntBuffer.allocate(1).asReadOnlyBuffer()));
                assertEquals(ncclInvalidArgument, ncclCommCuDevice(comm, new int[0]));
                int[] a = new int[1];
                assertEquals(ncclSuccess, ncclCommCount(comm, a));
                assertEquals(2, a[0]);
                IntBuffer b = IntBuffer.allocate(3).position(2);
                assertEquals(ncclSuccess, ncclCommUserRank(comm, b));
                assertEquals(1, b.get(2));
                try (IntPointer p = new IntPointer(1)) {
                    assertEquals(ncclSuccess, ncclCommCuDevice(comm, p));
                    assertEquals(1, p.get(0));
                    assertEquals(ncclSuccess, ncclCommGetAsyncError(comm, p));
                    assertEquals(ncclSuccess, p.get(0));
                }
            } finally {
                assertEquals(ncclSuccess, ncclCommDestroy(comm));
                comms[0].close();
            }
            assertEquals(ncclInvalidArgument, ncclCommCount(comm, new int[1]), "destroyed");
            NcclFacade.setAddress(comm, 0);
        }
    }

    /**
     * A group end that fails (here: FlexLink's group ended behind the facade's back) still leaves the thread
     * outside every group, returns NCCL's code, and the next group works.
     */
    @Test
    void aFailingGroupEndStillEndsTheGroup() {
        assertEquals(ncclSuccess, ncclGroupStart());
        assertEquals(ncclSuccess, ncclGroupStart());
        assertEquals(ncclSuccess, ncclGroupEnd()); // inner: the group stays open
        assertTrue(Groups.active());
        FlexLink.groupEnd(); // ends FlexLink's group: the facade's own end now finds none
        assertEquals(ncclInvalidUsage, ncclGroupEnd());
        assertEquals(0, NcclFacade.groupDepth());
        assertFalse(Groups.active());

        // and the next group works
        assertEquals(ncclSuccess, ncclGroupStart());
        assertEquals(ncclSuccess, ncclGroupEnd());
        assertEquals(0, NcclFacade.groupDepth());
    }

    @Test
    void groupsAndErrorStringsWorkWithoutCuda() {
        assertEquals(ncclSuccess, ncclGroupStart());
        assertEquals(ncclSuccess, ncclGroupStart());
        assertEquals(ncclSuccess, ncclGroupEnd());
        assertEquals(ncclSuccess, ncclGroupEnd());
        assertEquals(ncclInvalidUsage, ncclGroupEnd());
        assertEquals("invalid argument", ncclGetErrorString(ncclInvalidArgument).getString());
        assertEquals("no error", ncclGetErrorString(ncclSuccess).getString());
        assertEquals("operation timed out", ncclGetErrorString(ncclTimeout).getString());
        assertEquals("unknown result code", ncclGetErrorString(ncclNumResults).getString());
        assertEquals("unknown result code", ncclGetErrorString(99).getString());
        assertNotEquals(0, ncclGetErrorString(-1).address());
    }
}
