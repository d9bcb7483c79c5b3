package io.flexlink.cuda.facade;

import static io.flexlink.cuda.FlexNccl.*;
import static org.bytedeco.cuda.global.cudart.*;

import java.util.concurrent.TimeUnit;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * NCCL 2.28's lifecycle written against bytedeco's API, like {@link NcclProgram}: one thread makes three ranks,
 * rank 0 calls an AllReduce the others never join (its stream waits in cuStreamWaitValue32), ncclCommRevoke
 * releases it and every rank revokes and polls to ncclSuccess; the revoked ranks shrink without rank 2 inside a
 * group; the child's AllReduce is checked on poisoned outputs after ncclCommFinalize drained it; each state's
 * refusals have NCCL's codes.
 */
@SuppressWarnings("rawtypes") // bytedeco declares PointerPointer raw
public final class LifecycleProgram {
    private LifecycleProgram() {
    }

    private static int asyncError(ncclComm c) {
        int[] e = {-1};
        NcclProgram.nccl(ncclCommGetAsyncError(c, e), "ncclCommGetAsyncError");
        return e[0];
    }

    private static void pollToSuccess(ncclComm c, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int e;
        while ((e = asyncError(c)) == ncclInProgress) {
            NcclProgram.check(System.nanoTime() < deadline, what + ": still in progress after 60 s");
            Thread.onSpinWait();
        }
        NcclProgram.check(e == ncclSuccess, what + ": async error " + e);
    }

    /** Three ranks on {@code devices}; {@code n} floats per call. */
    public static void revokeShrinkFinalize(int[] devices, int n) {
        int ranks = devices.length;
        PointerPointer handles = new PointerPointer(ranks);
        NcclProgram.nccl(ncclCommInitAll(handles, ranks, devices), "ncclCommInitAll");
        ncclComm[] comms = new ncclComm[ranks];
        float[][] data = new float[ranks][];
        Pointer[] send = new Pointer[ranks];
        Pointer[] recv = new Pointer[ranks];
        CUstream_st[] streams = new CUstream_st[ranks];
        for (int r = 0; r < ranks; r++) {
            comms[r] = new ncclComm(handles.get(r));
            NcclProgram.cuda(cudaSetDevice(devices[r]), "cudaSetDevice");
            data[r] = NcclProgram.randomInts(n, 0x11FEL + 31L * r);
            send[r] = NcclProgram.deviceFloats(data[r]);
            recv[r] = NcclProgram.deviceFloats(NcclProgram.poison(n));
            streams[r] = new CUstream_st();
            NcclProgram.cuda(cudaStreamCreate(streams[r]), "cudaStreamCreate");
        }
        // a call stuck on peers that never come: the revoke must release its stream
        NcclProgram.cuda(cudaSetDevice(devices[0]), "cudaSetDevice");
        NcclProgram.nccl(ncclAllReduce(send[0], recv[0], n, ncclFloat, ncclSum, comms[0], streams[0]), "stuck call");
        NcclProgram.nccl(ncclCommRevoke(comms[0], NCCL_REVOKE_DEFAULT), "ncclCommRevoke rank 0");
        NcclProgram.cuda(cudaStreamSynchronize(streams[0]), "the stuck call's stream after the revoke");
        for (int r = 1; r < ranks; r++) {
            NcclProgram.nccl(ncclCommRevoke(comms[r], NCCL_REVOKE_DEFAULT), "ncclCommRevoke rank " + r);
        }
        for (int r = 0; r < ranks; r++) {
            pollToSuccess(comms[r], "revoked rank " + r);
            NcclProgram.check(ncclAllReduce(send[r], recv[r], n, ncclFloat, ncclSum, comms[r], streams[r])
                    == ncclInvalidUsage, "a revoked communicator's collective");
            NcclProgram.check(ncclCommFinalize(comms[r]) == ncclInvalidArgument, "a finalize after a revoke");
        }
        // the revoked ranks shrink without the last one, one thread inside a group
        ncclComm[] kids = new ncclComm[ranks];
        int[] excluded = {ranks - 1};
        NcclProgram.nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < ranks; r++) {
            kids[r] = new ncclComm();
            NcclProgram.nccl(ncclCommShrink(comms[r], excluded, 1, kids[r], null, NCCL_SHRINK_DEFAULT),
                    "ncclCommShrink rank " + r);
        }
        NcclProgram.nccl(ncclGroupEnd(), "ncclGroupEnd");
        NcclProgram.check(kids[ranks - 1].address() == 0, "the excluded rank gets NULL");
        int kept = ranks - 1;
        NcclProgram.nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < kept; r++) {
            NcclProgram.upload(recv[r], NcclProgram.poison(n));
            NcclProgram.nccl(ncclAllReduce(send[r], recv[r], n, ncclFloat, ncclSum, kids[r], streams[r]),
                    "child ncclAllReduce rank " + r);
        }
        NcclProgram.nccl(ncclGroupEnd(), "ncclGroupEnd");
        for (int r = 0; r < kept; r++) {
            NcclProgram.nccl(ncclCommFinalize(kids[r]), "child ncclCommFinalize rank " + r);
        }
        float[] sum = new float[n];
        for (int r = 0; r < kept; r++) {
            for (int i = 0; i < n; i++) {
                sum[i] += data[r][i];
            }
        }
        for (int r = 0; r < kept; r++) {
            NcclProgram.cuda(cudaStreamSynchronize(streams[r]), "sync");
            NcclProgram.expect(sum, NcclProgram.hostFloats(recv[r], n), "the shrunk child's AllReduce, rank " + r);
            NcclProgram.check(ncclAllReduce(send[r], recv[r], n, ncclFloat, ncclSum, kids[r], streams[r])
                    == ncclInvalidUsage, "a finalized communicator's collective");
            NcclProgram.nccl(ncclCommDestroy(kids[r]), "ncclCommDestroy child");
        }
        for (int r = 0; r < ranks; r++) {
            NcclProgram.nccl(ncclCommDestroy(comms[r]), "ncclCommDestroy parent");
            NcclProgram.cuda(cudaFree(send[r]), "cudaFree");
            NcclProgram.cuda(cudaFree(recv[r]), "cudaFree");
            NcclProgram.cuda(cudaStreamDestroy(streams[r]), "cudaStreamDestroy");
        }
    }
}
