import static io.flexlink.cuda.FlexNccl.*;          // was: org.bytedeco.cuda.global.nccl.*
import static org.bytedeco.cuda.global.cudart.*;

import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

public class AllReduceExample {
    static void check(int rc) {
        if (rc != ncclSuccess) {
            throw new IllegalStateException(ncclGetErrorString(rc).getString());
        }
    }

    public static void main(String[] args) {
        int[] devices = {0, 1};               // {0, 0} works too: two ranks on one GPU over PCIe
        int n = 64 << 20;                     // 64 Mi floats per rank
        PointerPointer comms = new PointerPointer(devices.length);
        check(ncclCommInitAll(comms, devices.length, devices));

        Pointer[] buf = new Pointer[devices.length];
        CUstream_st[] streams = new CUstream_st[devices.length];
        float[] ones = new float[n];
        java.util.Arrays.fill(ones, 1f);
        for (int r = 0; r < devices.length; r++) {
            cudaSetDevice(devices[r]);
            buf[r] = new Pointer();
            cudaMalloc(buf[r], 4L * n);
            cudaMemcpy(buf[r], new FloatPointer(ones), 4L * n, cudaMemcpyHostToDevice);
            streams[r] = new CUstream_st();
            cudaStreamCreate(streams[r]);
        }

        // one thread drives every rank: group the calls, as with NCCL
        check(ncclGroupStart());
        for (int r = 0; r < devices.length; r++) {
            check(ncclAllReduce(buf[r], buf[r], n, ncclFloat, ncclSum, new ncclComm(comms.get(r)), streams[r]));
        }
        check(ncclGroupEnd());

        for (int r = 0; r < devices.length; r++) {
            cudaStreamSynchronize(streams[r]);
            FloatPointer h = new FloatPointer(1);
            cudaMemcpy(h, buf[r], 4, cudaMemcpyDeviceToHost);
            System.out.println("rank " + r + ": " + h.get(0));   // 2.0
            check(ncclCommDestroy(new ncclComm(comms.get(r))));
            cudaFree(buf[r]);
            cudaStreamDestroy(streams[r]);
        }
    }
}
