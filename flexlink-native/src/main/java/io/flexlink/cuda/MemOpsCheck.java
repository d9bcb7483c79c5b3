package io.flexlink.cuda;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.PinnedMemory;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;

/**
 * Checks once per device, before its first stream, that stream memory operations work: the attributes the driver
 * reports (logged), then a real {@code cuStreamWriteValue32} and {@code cuStreamWaitValue32} on pinned memory.
 * The PCIe path cannot run without them, so a device that fails is refused (SYSTEM_ERROR) at its first stream.
 */
final class MemOpsCheck {
    private final boolean[] checked;

    MemOpsCheck(int devices) {
        this.checked = new boolean[devices];
    }

    void check(CudaBackend backend, int device) {
        if (checked[device]) {
            return;
        }
        synchronized (checked) {
            if (checked[device]) {
                return;
            }
            int[] nor = new int[1];
            int[] mem64 = new int[1];
            cudart.cuDeviceGetAttribute(nor, cudart.CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, device);
            cudart.cuDeviceGetAttribute(mem64, cudart.CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, device);
            CudaBackend.LOG.debug("INIT device {}: CAN_USE_STREAM_WAIT_VALUE_NOR={} CAN_USE_64_BIT_STREAM_MEM_OPS={}",
                    device, nor[0], mem64[0]);
            try (PinnedMemory flag = backend.allocatePinned(64)) {
                CUstream_st h = CudaBackend.newStream(device, "memops-check");
                try {
                    long a = flag.deviceAddress();
                    int rc = cudart.cuStreamWriteValue32(h, a, 1, cudart.CU_STREAM_WRITE_VALUE_DEFAULT);
                    if (rc == 0) {
                        rc = cudart.cuStreamWaitValue32(h, a, 1, cudart.CU_STREAM_WAIT_VALUE_GEQ);
                    }
                    int src = cudart.cudaStreamSynchronize(h);
                    if (rc != 0 || src != 0 || flag.readCounter(0) != 1) {
                        throw new FlexLinkException(Result.SYSTEM_ERROR, "device " + device + " ("
                                + backend.topology().gpu(device).model() + ") cannot run stream memory operations"
                                + " (cuStreamWaitValue32/cuStreamWriteValue32), which the PCIe path needs: "
                                + (rc != 0 ? CudaLibraries.driverError(rc) : src != 0 ? CudaLibraries.cudaError(src)
                                : "the written value did not arrive"));
                    }
                } finally {
                    cudart.cudaStreamDestroy(h);
                }
            }
            checked[device] = true;
        }
    }
}
