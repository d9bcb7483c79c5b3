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

import java.util.Base64;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclConfig_t;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * Programs of issue #17 written against bytedeco's API (only the static import names FlexLink): one rank
 * of a job whose ncclGetUniqueId came from another process ({@link #main}), one thread making two ranks
 * with a grouped ncclCommInitRank, and non-blocking creation with ncclCommInitRankConfig polled to success.
 * Every rank's data is seeded by its rank, so each rank computes the expected AllReduce itself.
 */
public final class FacadeIdProgram {
    private static final long SEED = 0x5EED0017L;

    private FacadeIdProgram() {
    }

    /** {@code rank BASE64 N}: rank $RANK of $WORLD_SIZE on GPU 0 over the id; prints {@code OK} or {@code ERROR ...}. */
    public static void main(String[] args) {
        int code = 0;
        try {
            int rank = Integer.parseInt(System.getenv("RANK"));
            int nranks = Integer.parseInt(System.getenv("WORLD_SIZE"));
            byte[] bytes = Base64.getDecoder().decode(args[1]);
            int n = Integer.parseInt(args[2]);
            cuda(cudaSetDevice(0), "cudaSetDevice");
            ncclUniqueId id = new ncclUniqueId();
            id.internal().put(bytes);
            ncclComm comm = new ncclComm();
            nccl(ncclCommInitRank(comm, nranks, id, rank), "ncclCommInitRank");
            allReduce(new ncclComm[] {comm}, new int[] {rank}, nranks, n);
            nccl(ncclCommDestroy(comm), "ncclCommDestroy");
            System.out.println("OK");
        } catch (RuntimeException | Error e) {
            System.out.println("ERROR " + e);
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    /**
     * An AllReduce (float SUM, small integers: exact) by the ranks {@code ranks} of {@code nranks} behind
     * {@code comms}, all on GPU 0, in one group; every output element checked.
     */
    static void allReduce(ncclComm[] comms, int[] ranks, int nranks, int n) {
        float[] want = new float[n];
        for (int r = 0; r < nranks; r++) {
            float[] d = randomInts(n, SEED + r);
            for (int i = 0; i < n; i++) {
                want[i] += d[i];
            }
        }
        Pointer[] send = new Pointer[comms.length];
        Pointer[] recv = new Pointer[comms.length];
        CUstream_st[] streams = new CUstream_st[comms.length];
        for (int k = 0; k < comms.length; k++) {
            send[k] = deviceFloats(randomInts(n, SEED + ranks[k]));
            recv[k] = deviceFloats(poison(n));
            streams[k] = new CUstream_st();
            cuda(cudaStreamCreate(streams[k]), "cudaStreamCreate");
        }
        nccl(ncclGroupStart(), "ncclGroupStart");
        for (int k = 0; k < comms.length; k++) {
            nccl(ncclAllReduce(send[k], recv[k], n, ncclFloat, ncclSum, comms[k], streams[k]), "ncclAllReduce");
        }
        nccl(ncclGroupEnd(), "ncclGroupEnd");
        for (int k = 0; k < comms.length; k++) {
            cuda(cudaStreamSynchronize(streams[k]), "cudaStreamSynchronize");
            expect(want, hostFloats(recv[k], n), "allReduce rank " + ranks[k]);
            cuda(cudaFree(send[k]), "cudaFree");
            cuda(cudaFree(recv[k]), "cudaFree");
            cuda(cudaStreamDestroy(streams[k]), "cudaStreamDestroy");
        }
    }

    /** One thread, two ranks on GPU 0: {@code ncclGroupStart(); ncclCommInitRank × 2; ncclGroupEnd();}. */
    public static void groupedInitRank(int n) {
        cuda(cudaSetDevice(0), "cudaSetDevice");
        ncclUniqueId id = new ncclUniqueId();
        nccl(ncclGetUniqueId(id), "ncclGetUniqueId");
        ncclComm[] comms = {new ncclComm(), new ncclComm()};
        nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < 2; r++) {
            nccl(ncclCommInitRank(comms[r], 2, id, r), "ncclCommInitRank " + r);
        }
        nccl(ncclGroupEnd(), "ncclGroupEnd (creates both ranks)");
        allReduce(comms, new int[] {0, 1}, 2, n);
        for (ncclComm c : comms) {
            nccl(ncclCommDestroy(c), "ncclCommDestroy");
        }
    }

    /** NCCL_CONFIG_INITIALIZER of the 2.30 headers, field by field (bytedeco has no initializer). */
    static ncclConfig_t initializer() {
        int undef = Integer.MIN_VALUE;
        return new ncclConfig_t().size(96).magic(0xcafebeef).version(NCCL_VERSION_CODE).blocking(undef)
                .cgaClusterSize(undef).minCTAs(undef).maxCTAs(undef).netName(null).splitShare(undef)
                .trafficClass(undef).commName(null).collnetEnable(undef).CTAPolicy(undef).shrinkShare(undef)
                .nvlsCTAs(undef).nChannelsPerNetPeer(undef).nvlinkCentricSched(undef).graphUsageMode(undef)
                .numRmaCtx(undef).maxP2pPeers(undef).graphStreamOrdering(undef);
    }

    /**
     * Two ranks on GPU 0 created non-blocking from one thread: each call answers ncclInProgress, and
     * ncclCommGetAsyncError is polled until ncclSuccess, as NCCL's documentation shows.
     */
    public static void nonBlocking(int n) {
        cuda(cudaSetDevice(0), "cudaSetDevice");
        ncclUniqueId id = new ncclUniqueId();
        nccl(ncclGetUniqueId(id), "ncclGetUniqueId");
        ncclComm[] comms = {new ncclComm(), new ncclComm()};
        try (BytePointer name = new BytePointer("facade-nonblocking")) {
            ncclConfig_t config = initializer().blocking(0).commName(name);
            for (int r = 0; r < 2; r++) {
                int rc = ncclCommInitRankConfig(comms[r], 2, id, r, config);
                if (rc != ncclInProgress && rc != ncclSuccess) {
                    nccl(rc, "ncclCommInitRankConfig " + r);
                }
            }
            long deadline = System.nanoTime() + 120_000_000_000L;
            for (ncclComm c : comms) {
                int[] state = {ncclInProgress};
                while (state[0] == ncclInProgress) {
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("non-blocking creation never finished");
                    }
                    nccl(ncclCommGetAsyncError(c, state), "ncclCommGetAsyncError");
                }
                nccl(state[0], "non-blocking creation (" + ncclGetLastError(c).getString() + ")");
            }
            config.close();
        }
        allReduce(comms, new int[] {0, 1}, 2, n);
        for (ncclComm c : comms) {
            nccl(ncclCommDestroy(c), "ncclCommDestroy");
        }
    }

    /** ncclBcast in place from rank 1 of two ranks on GPU 0 (made by ncclCommInitAll). */
    public static void bcast(int n) {
        org.bytedeco.javacpp.PointerPointer comms = new org.bytedeco.javacpp.PointerPointer(2);
        nccl(ncclCommInitAll(comms, 2, new int[] {0, 0}), "ncclCommInitAll");
        float[] data = randomInts(n, SEED + 99);
        Pointer[] buf = {deviceFloats(poison(n)), deviceFloats(data)};
        nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < 2; r++) {
            nccl(ncclBcast(buf[r], n, ncclFloat, 1, new ncclComm(comms.get(r)), null), "ncclBcast " + r);
        }
        nccl(ncclGroupEnd(), "ncclGroupEnd");
        cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        for (int r = 0; r < 2; r++) {
            expect(data, hostFloats(buf[r], n), "ncclBcast rank " + r);
            cuda(cudaFree(buf[r]), "cudaFree");
            nccl(ncclCommDestroy(new ncclComm(comms.get(r))), "ncclCommDestroy");
        }
    }
}
