package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.lang.management.ManagementFactory;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Steady-state calls allocate nothing on the Java heap (so no JavaCPP Pointer either). */
@Tag("gpu")
class AllocationGpuTest {
    static final int CALLS = 10_000;

    /** Bytes this thread allocated while running {@code calls} calls of {@code body}, after a warm-up. */
    static long allocatedPerCall(int calls, Runnable body, Runnable sync) {
        com.sun.management.ThreadMXBean bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        for (int i = 0; i < 3 * calls; i++) { // warm-up: JIT, caches, first-use allocations
            body.run();
            if (i % 1000 == 999) {
                sync.run();
            }
        }
        sync.run();
        long before = bean.getThreadAllocatedBytes(tid);
        for (int i = 0; i < calls; i++) {
            body.run();
            if (i % 1000 == 999) {
                sync.run();
            }
        }
        long after = bean.getThreadAllocatedBytes(tid);
        sync.run();
        return (after - before) / calls;
    }

    @Test
    void flexLinkAllReduceAllocatesNothing() {
        try (CudaBackend backend = GpuTests.open()) {
            FlexLinkConfig config = FlexLinkConfig.fromEnvironment();
            Communicator comm = FlexLink.initAll(backend, config, 0)[0];
            DeviceMemory buf = backend.allocate(0, 8);
            RuntimeStream s = backend.createStream(0, "alloc.user");
            long perCall = allocatedPerCall(CALLS,
                    () -> comm.allReduce(buf.address(), buf.address(), 2, DataType.FLOAT32, ReduceOp.SUM, s),
                    s::synchronize);
            assertEquals(0, perCall, "bytes per Communicator.allReduce");
            s.close();
            buf.close();
            comm.close();
        }
    }

    @Test
    void facadeAllReduceAllocatesNothing() {
        GpuTests.assumeCuda();
        PointerPointer<?> comms = new PointerPointer<>(1);
        assertEquals(FlexNccl.ncclSuccess, FlexNccl.ncclCommInitAll(comms, 1, new int[] {0}));
        ncclComm comm = new ncclComm(comms.get(0));
        Pointer buf = new Pointer();
        assertEquals(0, cudart.cudaMalloc(buf, 8));
        CUstream_st stream = new CUstream_st();
        assertEquals(0, cudart.cudaStreamCreate(stream));
        int[] rc = {0};
        long perCall = allocatedPerCall(CALLS, () -> rc[0] |= FlexNccl.ncclAllReduce(buf, buf, 2, FlexNccl.ncclFloat,
                FlexNccl.ncclSum, comm, stream), () -> cudart.cudaStreamSynchronize(stream));
        assertEquals(0, rc[0]);
        assertEquals(0, perCall, "bytes per FlexNccl.ncclAllReduce");
        assertTrue(FlexNccl.ncclCommDestroy(comm) == FlexNccl.ncclSuccess);
        cudart.cudaStreamDestroy(stream);
        cudart.cudaFree(buf);
    }
}
