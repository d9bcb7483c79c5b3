package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Test;

/** Where CUDA is absent the facade answers with result codes: no exception, no crash. */
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
        assertEquals(ncclInvalidArgument, ncclCommDestroy(bogus));
        assertEquals(ncclInvalidArgument, ncclCommAbort(null));
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
        assertEquals("unknown result code", ncclGetErrorString(99).getString());
        assertNotEquals(0, ncclGetErrorString(-1).address());
    }
}
