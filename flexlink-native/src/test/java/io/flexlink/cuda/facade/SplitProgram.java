package io.flexlink.cuda.facade;

import static io.flexlink.cuda.FlexNccl.*;
import static org.bytedeco.cuda.global.cudart.*;

import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * ncclCommSplit written against bytedeco's API, like {@link NcclProgram} (only the first static import names
 * FlexLink; FacadeProgramCompileTest compiles it against bytedeco's nccl too): one thread makes the ranks
 * with ncclCommInitAll, splits them by parity inside a group, and checks AllReduce and AllGather on every
 * child against sums and concatenations computed here, on poisoned outputs.
 */
@SuppressWarnings("rawtypes") // bytedeco declares PointerPointer raw
public final class SplitProgram {
    private SplitProgram() {
    }

    /** Ranks on {@code devices} (an even count), split by parity, keys reversing the order inside each child. */
    public static void splitByParity(int[] devices, int n) {
        int ranks = devices.length;
        PointerPointer parents = new PointerPointer(ranks);
        NcclProgram.nccl(ncclCommInitAll(parents, ranks, devices), "ncclCommInitAll");
        ncclComm[] kids = new ncclComm[ranks];
        NcclProgram.nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < ranks; r++) {
            kids[r] = new ncclComm();
            NcclProgram.nccl(ncclCommSplit(new ncclComm(parents.get(r)), r % 2, ranks - r, kids[r], null),
                    "ncclCommSplit rank " + r);
        }
        NcclProgram.nccl(ncclGroupEnd(), "ncclGroupEnd");
        int half = ranks / 2;
        int[] value = new int[1];
        float[][] data = new float[ranks][];
        Pointer[] send = new Pointer[ranks];
        Pointer[] reduced = new Pointer[ranks];
        Pointer[] gathered = new Pointer[ranks];
        CUstream_st[] streams = new CUstream_st[ranks];
        for (int r = 0; r < ranks; r++) {
            NcclProgram.nccl(ncclCommCount(kids[r], value), "ncclCommCount");
            NcclProgram.check(value[0] == half, "rank " + r + ": child of " + value[0] + " ranks");
            NcclProgram.nccl(ncclCommUserRank(kids[r], value), "ncclCommUserRank");
            NcclProgram.check(value[0] == half - 1 - r / 2, "rank " + r + ": child rank " + value[0]);
            NcclProgram.nccl(ncclCommCuDevice(kids[r], value), "ncclCommCuDevice");
            NcclProgram.check(value[0] == devices[r], "rank " + r + ": child device " + value[0]);
            NcclProgram.cuda(cudaSetDevice(devices[r]), "cudaSetDevice");
            data[r] = NcclProgram.randomInts(n, 0x5B117L + 977L * r + n);
            send[r] = NcclProgram.deviceFloats(data[r]);
            reduced[r] = NcclProgram.deviceFloats(NcclProgram.poison(n));
            gathered[r] = NcclProgram.deviceFloats(NcclProgram.poison(half * n));
            streams[r] = new CUstream_st();
            NcclProgram.cuda(cudaStreamCreate(streams[r]), "cudaStreamCreate");
        }
        NcclProgram.nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < ranks; r++) {
            NcclProgram.nccl(ncclAllReduce(send[r], reduced[r], n, ncclFloat, ncclSum, kids[r], streams[r]),
                    "ncclAllReduce rank " + r);
        }
        NcclProgram.nccl(ncclGroupEnd(), "ncclGroupEnd");
        NcclProgram.nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < ranks; r++) {
            NcclProgram.nccl(ncclAllGather(send[r], gathered[r], n, ncclFloat, kids[r], streams[r]),
                    "ncclAllGather rank " + r);
        }
        NcclProgram.nccl(ncclGroupEnd(), "ncclGroupEnd");
        for (int r = 0; r < ranks; r++) {
            NcclProgram.cuda(cudaStreamSynchronize(streams[r]), "sync");
            float[] sum = new float[n];
            float[] all = new float[half * n];
            for (int p = r % 2; p < ranks; p += 2) { // the parent ranks of this child, parent order
                int childRank = half - 1 - p / 2;
                for (int i = 0; i < n; i++) {
                    sum[i] += data[p][i];
                }
                System.arraycopy(data[p], 0, all, childRank * n, n);
            }
            NcclProgram.expect(sum, NcclProgram.hostFloats(reduced[r], n), "child allReduce, parent rank " + r);
            NcclProgram.expect(all, NcclProgram.hostFloats(gathered[r], half * n), "child allGather, parent rank " + r);
        }
        // parents first: the children are independent of them once made
        for (int r = 0; r < ranks; r++) {
            NcclProgram.nccl(ncclCommDestroy(new ncclComm(parents.get(r))), "ncclCommDestroy parent");
        }
        for (int r = 0; r < ranks; r++) {
            NcclProgram.nccl(ncclCommDestroy(kids[r]), "ncclCommDestroy child");
            NcclProgram.cuda(cudaFree(send[r]), "cudaFree");
            NcclProgram.cuda(cudaFree(reduced[r]), "cudaFree");
            NcclProgram.cuda(cudaFree(gathered[r]), "cudaFree");
            NcclProgram.cuda(cudaStreamDestroy(streams[r]), "cudaStreamDestroy");
        }
    }
}
