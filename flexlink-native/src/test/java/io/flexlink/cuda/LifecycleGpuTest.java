package io.flexlink.cuda;

import io.flexlink.cuda.facade.LifecycleProgram;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ncclCommRevoke, ncclCommShrink and ncclCommFinalize on a GPU (skipped where CUDA is missing): a stream blocked
 * in cuStreamWaitValue32 by a call its peers never join is released by the revoke (the host backend cannot show
 * that: its waits are Java threads), a revoked communicator shrinks, and the finalized child's results are exact.
 * Three ranks on GPU 0 (NCCL refuses that, so every call runs over the PCIe path).
 */
@Tag("gpu")
class LifecycleGpuTest {
    @Test
    void revokeReleasesAStuckStreamThenShrinkAndFinalize() {
        GpuTests.assumeCuda();
        LifecycleProgram.revokeShrinkFinalize(new int[] {0, 0, 0}, (1 << 20) + 7);
    }
}
