package io.flexlink.cuda.facade;

import static io.flexlink.cuda.FlexNccl.*;
import static org.bytedeco.cuda.global.cudart.*;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.cuda.nccl.ncclUniqueId;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * A small NCCL program written against bytedeco's API. Only the first static import names FlexLink:
 * with {@code import static org.bytedeco.cuda.global.nccl.*;} instead it compiles unchanged
 * (FacadeProgramCompileTest checks that) and runs on plain NCCL.
 */
@SuppressWarnings("rawtypes") // bytedeco declares PointerPointer raw
public final class NcclProgram {
    private NcclProgram() {
    }

    public static void nccl(int rc, String what) {
        if (rc != ncclSuccess) {
            throw new IllegalStateException(what + " failed: " + ncclGetErrorString(rc).getString() + " (" + rc + ")");
        }
    }

    public static void cuda(int rc, String what) {
        if (rc != cudaSuccess) {
            throw new IllegalStateException(what + " failed: CUDA error " + rc);
        }
    }

    static Pointer deviceFloats(float[] values) {
        Pointer p = new Pointer();
        cuda(cudaMalloc(p, 4L * values.length), "cudaMalloc");
        try (FloatPointer h = new FloatPointer(values)) {
            cuda(cudaMemcpy(p, h, 4L * values.length, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
        }
        return p;
    }

    public static float[] hostFloats(Pointer device, int n) {
        float[] out = new float[n];
        try (FloatPointer h = new FloatPointer(n)) {
            cuda(cudaMemcpy(h, device, 4L * n, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
            h.get(out);
        }
        return out;
    }

    public static void expect(float[] want, float[] got, String what) {
        for (int i = 0; i < want.length; i++) {
            if (Float.floatToIntBits(want[i]) != Float.floatToIntBits(got[i])) {
                throw new AssertionError(what + ": [" + i + "] = " + got[i] + ", expected " + want[i]);
            }
        }
    }

    /** Copies {@code values} over the device buffer {@code device}. */
    public static void upload(Pointer device, float[] values) {
        try (FloatPointer h = new FloatPointer(values)) {
            cuda(cudaMemcpy(device, h, 4L * values.length, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
        }
    }

    /**
     * Seeded random small integers in [-16, 16]: sums over a few ranks are exact in float, so results
     * compare bit for bit whatever the order of the additions.
     */
    public static float[] randomInts(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = r.nextInt(-16, 17);
        }
        return v;
    }

    /** A pattern no collective of these tests writes (outside the data's range), to see unwritten elements. */
    public static float[] poison(int n) {
        float[] v = new float[n];
        Arrays.fill(v, -1000.5f);
        return v;
    }

    /** One rank on device 0: every collective, a positioned pointer, queries, send/recv to itself. */
    public static void oneRank(int n) {
        cuda(cudaSetDevice(0), "cudaSetDevice");
        int[] version = new int[1];
        nccl(ncclGetVersion(version), "ncclGetVersion");
        if (version[0] < 22800) {
            throw new AssertionError("NCCL version code " + version[0]);
        }
        PointerPointer comms = new PointerPointer(1);
        nccl(ncclCommInitAll(comms, 1, new int[] {0}), "ncclCommInitAll");
        ncclComm comm = new ncclComm(comms.get(0));
        CUstream_st stream = new CUstream_st();
        cuda(cudaStreamCreate(stream), "cudaStreamCreate");
        float[] data = randomInts(n, 0x5EED0001L + n);
        Pointer send = deviceFloats(data);
        Pointer recv = deviceFloats(poison(n));

        // one rank: every collective copies the input; each result is checked before the next runs, on
        // a receive buffer poisoned again, so that a collective that wrote nothing cannot pass
        nccl(ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comm, stream), "ncclAllReduce");
        cuda(cudaStreamSynchronize(stream), "sync");
        expect(data, hostFloats(recv, n), "allReduce");

        upload(recv, poison(n));
        nccl(ncclAllGather(send, recv, n, ncclFloat32, comm, stream), "ncclAllGather");
        cuda(cudaStreamSynchronize(stream), "sync");
        expect(data, hostFloats(recv, n), "allGather");

        upload(recv, poison(n));
        nccl(ncclReduceScatter(send, recv, n, ncclFloat, ncclMax, comm, stream), "ncclReduceScatter");
        cuda(cudaStreamSynchronize(stream), "sync");
        expect(data, hostFloats(recv, n), "reduceScatter");

        upload(recv, poison(n));
        nccl(ncclBroadcast(send, recv, n, ncclFloat, 0, comm, stream), "ncclBroadcast");
        cuda(cudaStreamSynchronize(stream), "sync");
        expect(data, hostFloats(recv, n), "broadcast");

        upload(recv, poison(n));
        nccl(ncclReduce(send, recv, n, ncclFloat, ncclAvg, 0, comm, stream), "ncclReduce");
        cuda(cudaStreamSynchronize(stream), "sync");
        expect(data, hostFloats(recv, n), "reduce (avg of one rank)");

        // a Pointer with a position: bytedeco passes address + position (bytes for a plain Pointer)
        Pointer target = deviceFloats(poison(n));
        Pointer secondHalf = new Pointer(send).position(4L * (n / 2));
        nccl(ncclAllReduce(secondHalf, target, n - n / 2, ncclFloat, ncclSum, comm, stream), "ncclAllReduce positioned");
        cuda(cudaStreamSynchronize(stream), "sync");
        float[] half = poison(n);
        System.arraycopy(data, n / 2, half, 0, n - n / 2);
        expect(half, hostFloats(target, n), "positioned allReduce");

        int[] value = new int[1];
        nccl(ncclCommCount(comm, value), "ncclCommCount");
        check(value[0] == 1, "count " + value[0]);
        nccl(ncclCommCuDevice(comm, value), "ncclCommCuDevice");
        check(value[0] == 0, "device " + value[0]);
        nccl(ncclCommUserRank(comm, value), "ncclCommUserRank");
        check(value[0] == 0, "rank " + value[0]);
        nccl(ncclCommGetAsyncError(comm, value), "ncclCommGetAsyncError");
        check(value[0] == ncclSuccess, "async error " + value[0]);

        // point-to-point to itself, grouped
        Pointer got = deviceFloats(poison(n));
        nccl(ncclGroupStart(), "ncclGroupStart");
        nccl(ncclSend(send, n, ncclFloat, 0, comm, stream), "ncclSend");
        nccl(ncclRecv(got, n, ncclFloat, 0, comm, stream), "ncclRecv");
        nccl(ncclGroupEnd(), "ncclGroupEnd");
        cuda(cudaStreamSynchronize(stream), "sync");
        expect(data, hostFloats(got, n), "send/recv");

        check(ncclAllReduce(send, recv, n, 99, ncclSum, comm, stream) == ncclInvalidArgument, "bad datatype");
        nccl(ncclCommDestroy(comm), "ncclCommDestroy");
        check(ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comm, stream) == ncclInvalidArgument, "destroyed comm");
        // NULL arguments, answered as NCCL answers them
        check(ncclCommDestroy(new ncclComm()) == ncclSuccess, "ncclCommDestroy(NULL)");
        check(ncclCommAbort(new ncclComm()) == ncclSuccess, "ncclCommAbort(NULL)");
        check(ncclGetVersion((IntPointer) null) == ncclInvalidArgument, "ncclGetVersion(NULL)");
        for (Pointer p : new Pointer[] {send, recv, target, got}) {
            cuda(cudaFree(p), "cudaFree");
        }
        cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
    }

    /** ncclGetUniqueId + ncclCommInitRank for a one-rank communicator on the current device. */
    public static void initRank(int n) {
        cuda(cudaSetDevice(0), "cudaSetDevice");
        ncclUniqueId id = new ncclUniqueId();
        nccl(ncclGetUniqueId(id), "ncclGetUniqueId");
        ncclComm comm = new ncclComm();
        nccl(ncclCommInitRank(comm, 1, id, 0), "ncclCommInitRank");
        float[] data = randomInts(n, 0x5EED0002L + n);
        Pointer buf = deviceFloats(data);
        nccl(ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, null), "ncclAllReduce in place, default stream");
        cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        expect(data, hostFloats(buf, n), "in-place allReduce");
        nccl(ncclCommDestroy(comm), "ncclCommDestroy");
        cuda(cudaFree(buf), "cudaFree");
    }

    /**
     * Several ranks driven by this thread with ncclCommInitAll and a group. On devices {0, 0} plain NCCL
     * refuses; FlexLink runs it over its PCIe path and has no NCCL for ncclSend there.
     */
    public static void initAll(int[] devices, int n) {
        int ranks = devices.length;
        PointerPointer comms = new PointerPointer(ranks);
        nccl(ncclCommInitAll(comms, ranks, devices), "ncclCommInitAll");
        Pointer[] send = new Pointer[ranks];
        Pointer[] recv = new Pointer[ranks];
        CUstream_st[] streams = new CUstream_st[ranks];
        float[] want = new float[n];
        for (int r = 0; r < ranks; r++) {
            cuda(cudaSetDevice(devices[r]), "cudaSetDevice");
            float[] data = randomInts(n, 0x5EED0003L + 31L * r + n);
            for (int i = 0; i < n; i++) {
                want[i] += data[i];
            }
            send[r] = deviceFloats(data);
            recv[r] = deviceFloats(poison(n));
            streams[r] = new CUstream_st();
            cuda(cudaStreamCreate(streams[r]), "cudaStreamCreate");
        }
        nccl(ncclGroupStart(), "ncclGroupStart");
        for (int r = 0; r < ranks; r++) {
            nccl(ncclAllReduce(send[r], recv[r], n, ncclFloat, ncclSum, new ncclComm(comms.get(r)), streams[r]),
                    "ncclAllReduce rank " + r);
        }
        nccl(ncclGroupEnd(), "ncclGroupEnd");
        for (int r = 0; r < ranks; r++) {
            cuda(cudaStreamSynchronize(streams[r]), "sync");
            expect(want, hostFloats(recv[r], n), "allReduce rank " + r);
        }
        if (ranks > 1) {
            // rank 0 sends its input to rank 1 (on a shared device the PCIe path carries it): a poisoned buffer
            float[] sent = hostFloats(send[0], n);
            cuda(cudaSetDevice(devices[1]), "cudaSetDevice");
            Pointer into = deviceFloats(poison(n));
            nccl(ncclGroupStart(), "ncclGroupStart");
            nccl(ncclSend(send[0], n, ncclFloat, 1, new ncclComm(comms.get(0)), streams[0]), "ncclSend");
            nccl(ncclRecv(into, n, ncclFloat, 0, new ncclComm(comms.get(1)), streams[1]), "ncclRecv");
            nccl(ncclGroupEnd(), "ncclGroupEnd");
            cuda(cudaStreamSynchronize(streams[0]), "sync");
            cuda(cudaStreamSynchronize(streams[1]), "sync");
            expect(sent, hostFloats(into, n), "ncclRecv rank 1");
            cuda(cudaFree(into), "cudaFree");
        }
        for (int r = 0; r < ranks; r++) {
            nccl(ncclCommDestroy(new ncclComm(comms.get(r))), "ncclCommDestroy");
            cuda(cudaFree(send[r]), "cudaFree");
            cuda(cudaFree(recv[r]), "cudaFree");
            cuda(cudaStreamDestroy(streams[r]), "cudaStreamDestroy");
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
