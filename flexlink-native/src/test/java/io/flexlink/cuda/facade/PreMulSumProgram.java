package io.flexlink.cuda.facade;

import static io.flexlink.cuda.FlexNccl.*;
import static io.flexlink.cuda.facade.NcclProgram.cuda;
import static io.flexlink.cuda.facade.NcclProgram.deviceFloats;
import static io.flexlink.cuda.facade.NcclProgram.expect;
import static io.flexlink.cuda.facade.NcclProgram.hostFloats;
import static io.flexlink.cuda.facade.NcclProgram.nccl;
import static io.flexlink.cuda.facade.NcclProgram.poison;
import static io.flexlink.cuda.facade.NcclProgram.randomInts;
import static org.bytedeco.cuda.global.cudart.*;

import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * PreMulSum written against bytedeco's API (only the first static import names FlexLink; FacadeProgramCompileTest
 * compiles it with bytedeco's import too). Inputs are integers in [-16, 16] and the scalars -0.5 (even ranks) and 2
 * (odd ranks), so every product and sum is exact in float and results compare bit for bit. Host scalars are
 * destroyed right after the calls that use them return (NCCL allows it); a device scalar is changed between calls.
 */
@SuppressWarnings("rawtypes") // bytedeco declares PointerPointer raw
public final class PreMulSumProgram {
    private PreMulSumProgram() {
    }

    static float scalar(int rank) {
        return rank % 2 == 0 ? -0.5f : 2f;
    }

    public static void run(int[] devices, int n) {
        int ranks = devices.length;
        PointerPointer comms = new PointerPointer(ranks);
        nccl(ncclCommInitAll(comms, ranks, devices), "ncclCommInitAll");
        ncclComm[] comm = new ncclComm[ranks];
        Pointer[] send = new Pointer[ranks];
        Pointer[] recv = new Pointer[ranks];
        Pointer[] dev = new Pointer[ranks];
        CUstream_st[] streams = new CUstream_st[ranks];
        float[][] data = new float[ranks][];
        for (int r = 0; r < ranks; r++) {
            comm[r] = new ncclComm(comms.get(r));
            cuda(cudaSetDevice(devices[r]), "cudaSetDevice");
            data[r] = randomInts(n, 0x9E3779B9L + 17L * r + n);
            send[r] = deviceFloats(data[r]);
            recv[r] = deviceFloats(poison(n));
            dev[r] = deviceFloats(new float[] {0.25f});
            streams[r] = new CUstream_st();
            cuda(cudaStreamCreate(streams[r]), "cudaStreamCreate");
        }

        // host scalars: AllReduce and Reduce (root: the last rank), destroyed as soon as the calls returned
        int[][] ops = new int[ranks][1];
        nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < ranks; r++) {
            try (FloatPointer s = new FloatPointer(1).put(scalar(r))) {
                nccl(ncclRedOpCreatePreMulSum(ops[r], s, ncclFloat, ncclScalarHostImmediate, comm[r]),
                        "ncclRedOpCreatePreMulSum rank " + r);
            }
            nccl(ncclAllReduce(send[r], recv[r], n, ncclFloat, ops[r][0], comm[r], streams[r]), "ncclAllReduce");
        }
        nccl(ncclGroupEnd(), "ncclGroupEnd");
        for (int r = 0; r < ranks; r++) {
            nccl(ncclRedOpDestroy(ops[r][0], comm[r]), "ncclRedOpDestroy");
            if (ncclAllReduce(send[r], recv[r], n, ncclFloat, ops[r][0], comm[r], streams[r]) != ncclInvalidArgument) {
                throw new AssertionError("a destroyed PreMulSum was accepted");
            }
        }
        float[] want = new float[n];
        for (int i = 0; i < n; i++) {
            want[i] = data[0][i] * scalar(0); // not 0 + ...: a sum of products that are all -0.0 is -0.0, as NCCL's
            for (int r = 1; r < ranks; r++) {
                want[i] += data[r][i] * scalar(r);
            }
        }
        check(streams, recv, want, n, "AllReduce, host scalars", ranks, false);

        // a device scalar, read when each call runs: one operation per rank, 0.25 then -3 written between the calls
        for (int r = 0; r < ranks; r++) {
            nccl(ncclRedOpCreatePreMulSum(ops[r], dev[r], ncclFloat, ncclScalarDevice, comm[r]),
                    "ncclRedOpCreatePreMulSum device");
        }
        for (float value : new float[] {0.25f, -3f}) {
            for (int r = 0; r < ranks; r++) {
                cuda(cudaSetDevice(devices[r]), "cudaSetDevice");
                try (FloatPointer h = new FloatPointer(1).put(value)) {
                    cuda(cudaMemcpy(dev[r], h, 4, cudaMemcpyHostToDevice), "cudaMemcpy scalar");
                }
                try (FloatPointer h = new FloatPointer(poison(n))) {
                    cuda(cudaMemcpy(recv[r], h, 4L * n, cudaMemcpyHostToDevice), "cudaMemcpy poison");
                }
            }
            nccl(ncclGroupStart(), "ncclGroupStart");
            for (int r = 0; r < ranks; r++) {
                nccl(ncclReduce(send[r], recv[r], n, ncclFloat, ops[r][0], ranks - 1, comm[r], streams[r]),
                        "ncclReduce");
            }
            nccl(ncclGroupEnd(), "ncclGroupEnd");
            for (int i = 0; i < n; i++) {
                want[i] = data[0][i] * value;
                for (int r = 1; r < ranks; r++) {
                    want[i] += data[r][i] * value;
                }
            }
            check(streams, recv, want, n, "Reduce, device scalar " + value, ranks, true);
        }
        for (int r = 0; r < ranks; r++) {
            nccl(ncclRedOpDestroy(ops[r][0], comm[r]), "ncclRedOpDestroy");
        }
        for (int r = 0; r < ranks; r++) {
            nccl(ncclCommDestroy(comm[r]), "ncclCommDestroy");
            cuda(cudaSetDevice(devices[r]), "cudaSetDevice");
            cuda(cudaFree(send[r]), "cudaFree");
            cuda(cudaFree(recv[r]), "cudaFree");
            cuda(cudaFree(dev[r]), "cudaFree");
            cuda(cudaStreamDestroy(streams[r]), "cudaStreamDestroy");
        }
    }

    private static void check(CUstream_st[] streams, Pointer[] recv, float[] want, int n, String what, int ranks,
                              boolean rootOnly) {
        for (int r = 0; r < ranks; r++) {
            cuda(cudaStreamSynchronize(streams[r]), "cudaStreamSynchronize");
        }
        for (int r = rootOnly ? ranks - 1 : 0; r < ranks; r++) {
            expect(want, hostFloats(recv[r], n), what + " rank " + r);
        }
    }
}
