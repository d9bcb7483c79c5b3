package io.flexlink.cuda.facade;

import static io.flexlink.cuda.FlexNccl.*;
import static io.flexlink.cuda.facade.NcclProgram.cuda;
import static io.flexlink.cuda.facade.NcclProgram.deviceFloats;
import static io.flexlink.cuda.facade.NcclProgram.expect;
import static io.flexlink.cuda.facade.NcclProgram.hostFloats;
import static io.flexlink.cuda.facade.NcclProgram.nccl;
import static io.flexlink.cuda.facade.NcclProgram.randomInts;
import static io.flexlink.cuda.facade.NcclProgram.upload;
import static org.bytedeco.cuda.global.cudart.*;

import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * A bytedeco program that captures a grouped {@code ncclAllReduce} of every rank into a CUDA graph per rank
 * (global capture mode), then replays the graphs with new data before each replay, every element checked:
 * the case of issue #19, which lost the user's whole graph before (ncclGroupEnd failed inside the capture).
 */
@SuppressWarnings("rawtypes") // bytedeco declares PointerPointer raw
public final class GraphProgram {
    private GraphProgram() {
    }

    public static void captureAndReplay(int[] devices, int n, int replays) {
        captureAndReplay(devices, n, replays, cudaStreamDefault, false);
    }

    /**
     * As above, on streams made with {@code streamFlags} ({@code cudaStreamDefault}: blocking, as
     * {@code cudaStreamCreate}); with {@code eagerFirst}, one eager grouped call runs before the capture.
     */
    public static void captureAndReplay(int[] devices, int n, int replays, int streamFlags, boolean eagerFirst) {
        int ranks = devices.length;
        PointerPointer comms = new PointerPointer(ranks);
        nccl(ncclCommInitAll(comms, ranks, devices), "ncclCommInitAll");
        Pointer[] send = new Pointer[ranks];
        Pointer[] recv = new Pointer[ranks];
        CUstream_st[] streams = new CUstream_st[ranks];
        for (int r = 0; r < ranks; r++) {
            cuda(cudaSetDevice(devices[r]), "cudaSetDevice");
            send[r] = deviceFloats(new float[n]);
            recv[r] = deviceFloats(new float[n]);
            streams[r] = new CUstream_st();
            cuda(cudaStreamCreateWithFlags(streams[r], streamFlags), "cudaStreamCreateWithFlags");
        }
        if (eagerFirst) {
            nccl(ncclGroupStart(), "ncclGroupStart");
            for (int r = 0; r < ranks; r++) {
                nccl(ncclAllReduce(send[r], recv[r], n, ncclFloat, ncclSum, new ncclComm(comms.get(r)), streams[r]),
                        "eager ncclAllReduce");
            }
            nccl(ncclGroupEnd(), "eager ncclGroupEnd");
            for (int r = 0; r < ranks; r++) {
                cuda(cudaStreamSynchronize(streams[r]), "sync");
            }
        }
        CUgraph_st[] graphs = new CUgraph_st[ranks];
        CUgraphExec_st[] execs = new CUgraphExec_st[ranks];
        for (int r = 0; r < ranks; r++) {
            cuda(cudaStreamBeginCapture(streams[r], cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
        }
        int rc = ncclGroupStart();
        for (int r = 0; r < ranks && rc == ncclSuccess; r++) {
            rc = ncclAllReduce(send[r], recv[r], n, ncclFloat, ncclSum, new ncclComm(comms.get(r)), streams[r]);
        }
        rc = rc == ncclSuccess ? ncclGroupEnd() : rc;
        int[] ended = new int[ranks];
        for (int r = 0; r < ranks; r++) { // ended whatever happened: a capture left open breaks every later test
            graphs[r] = new CUgraph_st();
            ended[r] = cudaStreamEndCapture(streams[r], graphs[r]);
        }
        nccl(rc, "the captured group (ncclGroupStart, ncclAllReduce per rank, ncclGroupEnd)");
        for (int r = 0; r < ranks; r++) {
            cuda(ended[r], "cudaStreamEndCapture rank " + r);
        }
        for (int r = 0; r < ranks; r++) {
            execs[r] = new CUgraphExec_st();
            cuda(cudaGraphInstantiate(execs[r], graphs[r], 0L), "cudaGraphInstantiate rank " + r);
        }
        for (int k = 0; k < replays; k++) {
            float[] want = new float[n];
            for (int r = 0; r < ranks; r++) {
                float[] data = randomInts(n, 0x6EED0000L + 131L * k + r);
                for (int i = 0; i < n; i++) {
                    want[i] += data[i];
                }
                upload(send[r], data);
                upload(recv[r], NcclProgram.poison(n));
            }
            for (int r = 0; r < ranks; r++) {
                cuda(cudaGraphLaunch(execs[r], streams[r]), "cudaGraphLaunch rank " + r);
            }
            for (int r = 0; r < ranks; r++) {
                cuda(cudaStreamSynchronize(streams[r]), "sync");
                expect(want, hostFloats(recv[r], n), "replay " + k + ", rank " + r);
            }
        }
        for (int r = 0; r < ranks; r++) {
            cuda(cudaGraphExecDestroy(execs[r]), "cudaGraphExecDestroy");
            cuda(cudaGraphDestroy(graphs[r]), "cudaGraphDestroy");
        }
        for (int r = 0; r < ranks; r++) {
            nccl(ncclCommDestroy(new ncclComm(comms.get(r))), "ncclCommDestroy after capture");
            cuda(cudaFree(send[r]), "cudaFree");
            cuda(cudaFree(recv[r]), "cudaFree");
            cuda(cudaStreamDestroy(streams[r]), "cudaStreamDestroy");
        }
    }
}
