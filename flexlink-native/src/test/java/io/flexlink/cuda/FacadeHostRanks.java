package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.ncclCommGetAsyncError;
import static io.flexlink.cuda.FlexNccl.ncclInProgress;
import static io.flexlink.cuda.FlexNccl.ncclSuccess;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.NcclFacade.FacadeComm;
import io.flexlink.runtime.host.HostBackend;
import java.util.concurrent.TimeUnit;
import org.bytedeco.cuda.nccl.ncclComm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the facade's CPU tests of the communicator lifecycle share: four host-backend devices with small
 * chunks, one backend per test (every facade group ended when the test ends), host-backend communicators
 * registered as facade handles, and the polling of a non-blocking one.
 */
abstract class FacadeHostRanks {
    static final FlexLinkConfig CONFIG = FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "4")
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();
    HostBackend backend;

    @BeforeEach
    void openBackend() {
        backend = new HostBackend(CONFIG);
    }

    @AfterEach
    void closeBackend() {
        assertEquals(0, NcclFacade.groupDepth());
        backend.close();
    }

    /** Registers each communicator under a facade handle; {@code blocking} as ncclConfig_t.blocking says. */
    static ncclComm[] handles(Communicator[] comms, boolean blocking) {
        ncclComm[] out = new ncclComm[comms.length];
        for (int r = 0; r < comms.length; r++) {
            long h = NcclFacade.newHandle();
            NcclFacade.put(new FacadeComm(h, comms[r], null, null, null, blocking));
            out[r] = new ncclComm();
            NcclFacade.setAddress(out[r], h);
        }
        return out;
    }

    static int asyncError(ncclComm c) {
        int[] e = {-1};
        assertEquals(ncclSuccess, ncclCommGetAsyncError(c, e));
        return e[0];
    }

    /** Polls like an NCCL program polls a non-blocking communicator; the work bounds it. */
    static int pollUntilDone(ncclComm c) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int e;
        while ((e = asyncError(c)) == ncclInProgress) {
            assertTrue(System.nanoTime() < deadline, "never finished");
            Thread.onSpinWait();
        }
        return e;
    }
}
