package io.flexlink.cuda;

import static io.flexlink.cuda.FlexNccl.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.testing.CollectiveHarness;
import java.nio.LongBuffer;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.LongPointer;
import org.junit.jupiter.api.Test;

/**
 * NCCL 2.30's ncclCommSuspend, ncclCommResume and ncclCommMemStats through the facade without a GPU (host-backend
 * communicators registered as facade handles): NCCL's argument checks first (ncclInvalidArgument, the last error
 * naming the argument), then what FlexLink can give: a suspend is refused with ncclInvalidUsage and the communicator
 * stays usable, a resume has nothing to resume, the statistics say nothing is suspendable or suspended, and a
 * communicator without NCCL's path has no GPU memory figure (ncclInvalidUsage saying why).
 */
class FacadeSuspendTest extends FacadeHostRanks {
    /** {@code rc} is {@code code}, and the last error (ncclGetLastError) contains every text. */
    private static void refused(int code, int rc, String... texts) {
        assertEquals(code, rc);
        String last = ncclGetLastError(null).getString();
        for (String text : texts) {
            assertTrue(last.contains(text), last);
        }
    }

    private void exact(Communicator[] comms) {
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            CollectiveHarness.Outcome o = h.run(Collective.ALL_REDUCE, DataType.FLOAT32, ReduceOp.SUM, 9_001, 0,
                    false, 11);
            assertEquals(0, o.wrong, o.toString());
        }
    }

    @Test
    void aNullOrUnknownCommunicatorIsAnInvalidArgument() {
        refused(ncclInvalidArgument, ncclCommSuspend(null, NCCL_SUSPEND_MEM), "ncclCommSuspend", "comm: NULL");
        refused(ncclInvalidArgument, ncclCommSuspend(new ncclComm(), 0), "comm: NULL");
        refused(ncclInvalidArgument, ncclCommResume(null), "ncclCommResume", "comm: NULL");
        refused(ncclInvalidArgument, ncclCommMemStats(null, ncclStatGpuMemTotal, new long[1]),
                "ncclCommMemStats", "comm: NULL");
        ncclComm unknown = new ncclComm();
        NcclFacade.setAddress(unknown, NcclFacade.HANDLE_TAG | 0x7FFF_FFE0L); // never handed out
        refused(ncclInvalidArgument, ncclCommSuspend(unknown, NCCL_SUSPEND_MEM), "comm: not a communicator");
        refused(ncclInvalidArgument, ncclCommResume(unknown), "comm: not a communicator");
        refused(ncclInvalidArgument, ncclCommMemStats(unknown, ncclStatGpuMemSuspend, new long[1]),
                "comm: not a communicator");
        NcclFacade.setAddress(unknown, 0);
    }

    @Test
    void aSuspendIsRefusedAndTheCommunicatorStaysUsable() {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, true);
        refused(ncclInvalidArgument, ncclCommSuspend(h[0], 2), "flags: 0x2 (NCCL_SUSPEND_MEM, 0x1, is the only flag)");
        refused(ncclInvalidArgument, ncclCommSuspend(h[0], NCCL_SUSPEND_MEM | 4), "flags: 0x5");
        for (ncclComm c : h) {
            refused(ncclInvalidUsage, ncclCommSuspend(c, NCCL_SUSPEND_MEM), "FlexLink cannot suspend a communicator");
            refused(ncclInvalidUsage, ncclCommSuspend(c, 0), "the communicator stays usable");
            refused(ncclInvalidUsage, ncclCommResume(c), "comm: not suspended");
        }
        exact(world); // nothing was released: the collectives still run, exactly
        long[] suspended = {-1};
        assertEquals(ncclSuccess, ncclCommMemStats(h[1], ncclStatGpuMemSuspended, suspended));
        assertEquals(0, suspended[0], "never suspended");
        for (ncclComm c : h) {
            assertEquals(ncclSuccess, ncclCommDestroy(c));
        }
    }

    @Test
    void theStatisticsCheckTheirArgumentsAndSayNothingIsSuspendable() {
        Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
        ncclComm[] h = handles(world, true);
        ncclComm c = h[0];
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemTotal, (long[]) null), "value: NULL");
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemTotal, new long[0]), "value: NULL");
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemTotal, (LongBuffer) null), "value: NULL");
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemTotal, LongBuffer.allocate(0)), "value: NULL");
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemTotal,
                LongBuffer.allocate(1).asReadOnlyBuffer()), "value: NULL");
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemTotal, new LongPointer()), "value: NULL");
        refused(ncclInvalidArgument, ncclCommMemStats(c, -1, new long[1]), "stat: -1");
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemTotal + 1, new long[1]),
                "stat: 4 (ncclStatGpuMemSuspend, 0, to ncclStatGpuMemTotal, 3)");

        long[] a = {-1};
        assertEquals(ncclSuccess, ncclCommMemStats(c, ncclStatGpuMemSuspend, a));
        assertEquals(0, a[0], "nothing is released by a suspend");
        LongBuffer b = LongBuffer.wrap(new long[] {-1, -1, -1});
        b.position(2);
        assertEquals(ncclSuccess, ncclCommMemStats(c, ncclStatGpuMemSuspended, b));
        assertEquals(0, b.get(2), "written at the buffer's position");
        assertEquals(-1, b.get(1));
        assertEquals(2, b.position(), "the position stays");
        try (LongPointer p = new LongPointer(1)) {
            p.put(0, -1);
            assertEquals(ncclSuccess, ncclCommMemStats(c, ncclStatGpuMemSuspend, p));
            assertEquals(0, p.get(0));
        }

        long[] v = {-1};
        refused(ncclInvalidUsage, ncclCommMemStats(c, ncclStatGpuMemPersist, v), "has no NCCL path");
        refused(ncclInvalidUsage, ncclCommMemStats(c, ncclStatGpuMemTotal, v),
                "FlexLink does not count its own paths' GPU memory");
        assertEquals(-1, v[0], "a refused call writes nothing");
        for (ncclComm x : h) {
            assertEquals(ncclSuccess, ncclCommDestroy(x));
        }
        refused(ncclInvalidArgument, ncclCommMemStats(c, ncclStatGpuMemSuspend, a), "comm: not a communicator");
        refused(ncclInvalidArgument, ncclCommSuspend(c, NCCL_SUSPEND_MEM), "comm: not a communicator");
    }
}
