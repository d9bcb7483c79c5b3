package io.flexlink.cuda.bench;

import static org.bytedeco.cuda.global.cudart.*;
import static org.bytedeco.cuda.global.nccl.*;

import io.flexlink.DataType;
import io.flexlink.runtime.host.FloatFormats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.SplittableRandom;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * Which calls of the NCCL library present leave output elements unwritten or wrong, on one rank (the
 * only NCCL configuration one GPU allows): every collective × the 12 types × every operation
 * (SUM, PROD, MAX, MIN, AVG, PreMulSum with a host or a device scalar of 1 and 2) × counts around
 * multiples of 4 and powers of two, out of place with a poisoned output and in place (PreMulSum by 2,
 * so that an unwritten element shows). Prints one line per case that is refused or wrong and a summary.
 * Plain bytedeco NCCL, nothing of FlexLink but the float conversions. Usage: {@code NcclFaultProbe}.
 */
@SuppressWarnings("rawtypes")
public final class NcclFaultProbe {
    private static final long[] COUNTS = {1, 3, 4, 5, 7, 8, 17, 1000, 1003, 65537, 131075, 196611, 262143, 262144,
        262145, 262146, 262147, 524291, 1048576, 1048581, 4194307};
    private static final byte POISON = (byte) 0xA5;
    private static final String[] COLLS = {"AllReduce", "Reduce", "ReduceScatter", "AllGather", "Broadcast"};
    /** Operation labels: NCCL's four built-in reductions and AVG, then PreMulSum variants. */
    private static final String[] OPS = {"sum", "prod", "max", "min", "avg", "pms-host-1", "pms-host-2", "pms-dev-2"};

    private NcclFaultProbe() {
    }

    static void cuda(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + ": CUDA error " + rc);
        }
    }

    public static void main(String[] args) {
        long t0 = System.nanoTime();
        cuda(cudaSetDevice(0), "cudaSetDevice");
        int[] version = new int[1];
        ncclGetVersion(version);
        PointerPointer comms = new PointerPointer(1);
        int rc0 = ncclCommInitAll(comms, 1, new int[] {0});
        if (rc0 != 0) {
            throw new IllegalStateException("ncclCommInitAll: " + rc0);
        }
        ncclComm comm = new ncclComm(comms.get(0));
        CUstream_st stream = new CUstream_st();
        cuda(cudaStreamCreate(stream), "cudaStreamCreate");
        long maxBytes = COUNTS[COUNTS.length - 1] * 8;
        Pointer send = new Pointer();
        Pointer recv = new Pointer();
        Pointer scalarDev = new Pointer();
        cuda(cudaMalloc(send, maxBytes), "cudaMalloc");
        cuda(cudaMalloc(recv, maxBytes), "cudaMalloc");
        cuda(cudaMalloc(scalarDev, 8), "cudaMalloc");
        Pointer hostOut = new Pointer();
        Pointer hostIn = new Pointer();
        cuda(cudaMallocHost(hostOut, maxBytes), "cudaMallocHost");
        cuda(cudaMallocHost(hostIn, maxBytes), "cudaMallocHost");
        ByteBuffer out = hostOut.capacity(maxBytes).asByteBuffer().order(ByteOrder.nativeOrder());
        ByteBuffer in = hostIn.capacity(maxBytes).asByteBuffer().order(ByteOrder.nativeOrder());
        ByteBuffer doubled = ByteBuffer.allocateDirect((int) maxBytes).order(ByteOrder.nativeOrder());
        Pointer scalarHost = new Pointer();
        cuda(cudaMallocHost(scalarHost, 8), "cudaMallocHost");
        ByteBuffer scalar = scalarHost.capacity(8).asByteBuffer().order(ByteOrder.nativeOrder());
        System.out.println("# NCCL " + version[0] + ", 1 rank on device 0; one line per refused or wrong case");
        System.out.println("# collective type op count place: result (wrong elements, first wrong index, unwritten)");
        int cases = 0;
        int wrong = 0;
        int refused = 0;
        for (DataType type : DataType.values()) {
            int sz = type.size();
            for (long count : COUNTS) {
                long bytes = count * sz;
                fill(in, doubled, type, count, 0x5EEDL + count * 31 + type.ordinal());
                cuda(cudaMemcpy(send, hostIn, bytes, cudaMemcpyHostToDevice), "upload");
                for (int c = 0; c < COLLS.length; c++) {
                    int nOps = c < 3 ? OPS.length : 1;
                    for (int o = 0; o < nOps; o++) {
                        for (int inPlace = 0; inPlace < 2; inPlace++) {
                            boolean pms2 = OPS[o].endsWith("-2");
                            if (inPlace == 1 && !pms2) {
                                continue; // an identity in place cannot show an unwritten element
                            }
                            cases++;
                            Pointer dst = recv;
                            Pointer src = send;
                            if (inPlace == 1) {
                                cuda(cudaMemcpy(recv, hostIn, bytes, cudaMemcpyHostToDevice), "upload in place");
                                src = recv;
                            } else {
                                cuda(cudaMemset(recv, POISON & 0xff, bytes), "poison");
                            }
                            int[] op = {o};
                            int rcOp = 0;
                            if (o == 4) {
                                op[0] = ncclAvg;
                            } else if (o >= 5) {
                                putScalar(scalar, type, o == 5 ? 1 : 2);
                                boolean dev = o == 7;
                                if (dev) {
                                    cuda(cudaMemcpy(scalarDev, scalarHost, sz, cudaMemcpyHostToDevice), "scalar");
                                }
                                rcOp = ncclRedOpCreatePreMulSum(op, dev ? scalarDev : scalarHost, type.code(),
                                        dev ? ncclScalarDevice : ncclScalarHostImmediate, comm);
                            }
                            int rc = rcOp;
                            if (rc == 0) {
                                rc = call(c, src, dst, count, type.code(), op[0], comm, stream);
                            }
                            if (o >= 5 && rcOp == 0) {
                                ncclRedOpDestroy(op[0], comm);
                            }
                            String label = String.format(Locale.ROOT, "%s %s %s %d %s", COLLS[c], type, OPS[o], count,
                                    inPlace == 1 ? "in-place" : "out-of-place");
                            if (rc != 0) {
                                refused++;
                                System.out.println(label + ": refused rc=" + rc + " ("
                                        + ncclGetErrorString(rc).getString() + ")" + (rcOp != 0 ? " by PreMulSum" : ""));
                                cudaStreamSynchronize(stream);
                                continue;
                            }
                            cuda(cudaStreamSynchronize(stream), "sync " + label);
                            cuda(cudaMemcpy(hostOut, dst, bytes, cudaMemcpyDeviceToHost), "download");
                            ByteBuffer want = pms2 && c < 3 ? doubled : in;
                            String bad = compare(out, want, bytes, sz);
                            if (bad != null) {
                                wrong++;
                                System.out.println(label + ": WRONG " + bad);
                            }
                        }
                    }
                }
            }
        }
        System.out.printf(Locale.ROOT, "# %d cases, %d wrong, %d refused, %.1f s%n", cases, wrong, refused,
                (System.nanoTime() - t0) / 1e9);
        ncclCommDestroy(comm);
    }

    static int call(int c, Pointer send, Pointer recv, long count, int type, int op, ncclComm comm, CUstream_st s) {
        switch (c) {
            case 0: return ncclAllReduce(send, recv, count, type, op, comm, s);
            case 1: return ncclReduce(send, recv, count, type, op, 0, comm, s);
            case 2: return ncclReduceScatter(send, recv, count, type, op, comm, s);
            case 3: return ncclAllGather(send, recv, count, type, comm, s);
            default: return ncclBroadcast(send, recv, count, type, 0, comm, s);
        }
    }

    /** Small integers for floating-point types, random bits (never the poison) for integers; and twice them. */
    static void fill(ByteBuffer in, ByteBuffer doubled, DataType type, long count, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int sz = type.size();
        long mask = sz == 8 ? -1L : (1L << (8 * sz)) - 1;
        long poison = 0;
        for (int i = 0; i < sz; i++) {
            poison = poison << 8 | (POISON & 0xff);
        }
        for (long i = 0; i < count; i++) {
            long bits;
            long twice;
            if (type.isFloatingPoint()) {
                int v = r.nextInt(-2, 3);
                bits = FloatFormats.fromDouble(type, v);
                twice = FloatFormats.fromDouble(type, 2.0 * v);
            } else {
                bits = r.nextLong() & mask;
                if (bits == poison) {
                    bits ^= 1;
                }
                twice = (bits << 1) & mask;
            }
            put(in, (int) (i * sz), sz, bits);
            put(doubled, (int) (i * sz), sz, twice);
        }
    }

    static void putScalar(ByteBuffer b, DataType type, int v) {
        long bits = type.isFloatingPoint() ? FloatFormats.fromDouble(type, v) : v;
        put(b, 0, type.size(), bits);
    }

    static void put(ByteBuffer b, int at, int sz, long bits) {
        switch (sz) {
            case 1: b.put(at, (byte) bits); break;
            case 2: b.putShort(at, (short) bits); break;
            case 4: b.putInt(at, (int) bits); break;
            default: b.putLong(at, bits);
        }
    }

    /** Null when equal, else the count of wrong elements, the first wrong index and how many still hold the poison. */
    static String compare(ByteBuffer got, ByteBuffer want, long bytes, int sz) {
        ByteBuffer g = got.duplicate().position(0).limit((int) bytes);
        ByteBuffer w = want.duplicate().position(0).limit((int) bytes);
        int at = g.mismatch(w);
        if (at < 0) {
            return null;
        }
        long wrongElems = 0;
        long poisoned = 0;
        long first = at / sz;
        long lastWrong = first;
        for (long e = first; e < bytes / sz; e++) {
            boolean bad = false;
            boolean allPoison = true;
            for (int k = 0; k < sz; k++) {
                byte x = got.get((int) (e * sz + k));
                bad |= x != want.get((int) (e * sz + k));
                allPoison &= x == POISON;
            }
            if (bad) {
                wrongElems++;
                lastWrong = e;
                if (allPoison) {
                    poisoned++;
                }
            }
        }
        return wrongElems + " wrong of " + bytes / sz + ", first " + first + ", last " + lastWrong + ", unwritten "
                + poisoned;
    }
}
