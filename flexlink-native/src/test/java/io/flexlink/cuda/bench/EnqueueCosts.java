package io.flexlink.cuda.bench;

import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.bytedeco.cuda.global.cudart.*;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.cuda.CudaStream;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import java.util.Arrays;
import java.util.Locale;
import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.cudart.CUstreamBatchMemOpParams_v1;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.cudart.cudaMemcpy3DBatchOp;
import org.bytedeco.cuda.cudart.cudaMemcpyAttributes;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.SizeTPointer;

/**
 * Host time of each kind of stream operation the staged paths enqueue, from Java, one GPU: the
 * per-operation cost a split call's host enqueue is made of (median over batches of 100 calls, the
 * stream synchronized between batches and not timed). Also batched memory operations and CUDA graph
 * launches of captured pipelines, the candidates for cutting that cost. Usage: {@code EnqueueCosts}.
 */
public final class EnqueueCosts {
    static final int BATCH = 100;
    static final int ROUNDS = 40;

    private EnqueueCosts() {
    }

    interface Op {
        void run(int i);
    }

    static double perCallNanos(CUstream_st s, Op op) {
        double[] t = new double[ROUNDS];
        for (int r = -5; r < ROUNDS; r++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < BATCH; i++) {
                op.run(i);
            }
            long t1 = System.nanoTime();
            check(cudaStreamSynchronize(s), "sync");
            if (r >= 0) {
                t[r] = (t1 - t0) / (double) BATCH;
            }
        }
        Arrays.sort(t);
        return t[ROUNDS / 2];
    }

    static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + ": error " + rc);
        }
    }

    static void row(String what, double ns) {
        System.out.println(String.format(Locale.ROOT, "%-58s %8.2f us", what, ns / 1e3));
    }

    public static void main(String[] args) {
        try (CudaBackend b = CudaBackend.open(FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, "cuda").build())) {
            CudaStream cs = (CudaStream) b.createStream(0, "bench");
            CudaStream other = (CudaStream) b.createStream(0, "bench2");
            CUstream_st s = cs.handle();
            PinnedMemory host = b.allocatePinned(64L << 20);
            DeviceMemory dev = b.allocate(0, 64L << 20);
            DeviceMemory dev2 = b.allocate(0, 64L << 20);
            long flag = host.deviceAddress();
            host.writeCounter(0, 1 << 20);
            RuntimeEvent ev = b.createEvent(0, false);
            long small = 64 << 10;
            System.out.println("# host time per call from Java, median of " + ROUNDS + " batches of " + BATCH);
            row("CudaStream.copy D2H 64 KB (cudaMemcpyAsync)", perCallNanos(s,
                    i -> cs.copy(host.deviceAddress() + 4096 + (i % 64) * small, dev.address(), small)));
            row("CudaStream.copy H2D 64 KB (cudaMemcpyAsync)", perCallNanos(s,
                    i -> cs.copy(dev.address() + (i % 64) * small, host.deviceAddress() + 4096, small)));
            row("CudaStream.copy D2D 64 KB", perCallNanos(s,
                    i -> cs.copy(dev2.address() + (i % 64) * small, dev.address(), small)));
            Raw dp = new Raw();
            Raw sp = new Raw();
            row("cudaMemcpy2DAsync D2H 8 rows x 8 KB", perCallNanos(s, i -> check(cudaMemcpy2DAsync(
                    dp.set(host.deviceAddress() + 4096), 8192, sp.set(dev.address()), 65536, 8192, 8,
                    cudaMemcpyDefault, s), "2d")));
            // a staged item's pieces in two runs (the consumers before and after the producer, 8 ranks): two 2D copies
            // now; one batch call of two 3D copies, or of seven 1D copies, the candidates (neither is capturable)
            long hp = host.deviceAddress() + 4096;
            row("2 x cudaMemcpy2DAsync D2H (4 and 3 rows x 8 KB)", perCallNanos(s, i -> {
                check(cudaMemcpy2DAsync(dp.set(hp), 8192, sp.set(dev.address()), 65536, 8192, 4, cudaMemcpyDefault, s),
                        "2d");
                check(cudaMemcpy2DAsync(dp.set(hp + 4 * 8192), 8192, sp.set(dev.address() + 5 * 65536), 65536, 8192, 3,
                        cudaMemcpyDefault, s), "2d");
            }));
            cudaMemcpy3DBatchOp ops = runs(new long[] {hp, hp + 4 * 8192}, 8192, new long[] {dev.address(),
                    dev.address() + 5 * 65536}, 65536, 8192, new long[] {4, 3});
            row("cudaMemcpy3DBatchAsync D2H, the same as 2 ops", perCallNanos(s,
                    i -> check(cudaMemcpy3DBatchAsync(2, ops, 0, s), "3d batch")));
            cudaMemcpy3DBatchOp back = runs(new long[] {dev.address(), dev.address() + 5 * 65536}, 65536,
                    new long[] {hp, hp + 4 * 8192}, 8192, 8192, new long[] {4, 3});
            row("2 x cudaMemcpy2DAsync H2D (4 and 3 rows x 8 KB)", perCallNanos(s, i -> {
                check(cudaMemcpy2DAsync(dp.set(dev.address()), 65536, sp.set(hp), 8192, 8192, 4, cudaMemcpyDefault, s),
                        "2d");
                check(cudaMemcpy2DAsync(dp.set(dev.address() + 5 * 65536), 65536, sp.set(hp + 4 * 8192), 8192, 8192, 3,
                        cudaMemcpyDefault, s), "2d");
            }));
            row("cudaMemcpy3DBatchAsync H2D, the same as 2 ops", perCallNanos(s,
                    i -> check(cudaMemcpy3DBatchAsync(2, back, 0, s), "3d batch")));
            PointerPointer<Pointer> dsts = new PointerPointer<>(7);
            PointerPointer<Pointer> srcs = new PointerPointer<>(7);
            SizeTPointer sizes = new SizeTPointer(7);
            for (int k = 0; k < 7; k++) {
                dsts.put(k, new Raw().set(hp + k * 8192L));
                srcs.put(k, new Raw().set(dev.address() + (k < 4 ? k : k + 1) * 65536L));
                sizes.put(k, 8192);
            }
            cudaMemcpyAttributes attrs = new cudaMemcpyAttributes(1);
            attrs.srcAccessOrder(cudaMemcpySrcAccessOrderStream);
            SizeTPointer attrsIdx = new SizeTPointer(1).put(0, 0);
            row("cudaMemcpyBatchAsync D2H, 7 copies of 8 KB", perCallNanos(s,
                    i -> check(cudaMemcpyBatchAsync(dsts, srcs, sizes, 7, attrs, attrsIdx, 1, s), "batch")));
            row("CudaStream.writeValue32 (cuStreamWriteValue32)", perCallNanos(s, i -> cs.writeValue32(host, 64, i)));
            row("CudaStream.waitValue32, satisfied (cuStreamWaitValue32)", perCallNanos(s,
                    i -> cs.waitValue32(host, 0, 1)));
            row("CudaStream.record (cudaEventRecord)", perCallNanos(s, i -> cs.record(ev)));
            row("CudaStream.waitEvent (cudaStreamWaitEvent)", perCallNanos(s, i -> {
                other.record(ev);
                cs.waitEvent(ev);
            }));
            row("  (that row is record + wait; record alone above)", 0);
            row("CudaStream.reduce fp32 64 KB (cuLaunchKernel, device switch)", perCallNanos(s,
                    i -> cs.reduce(dev.address(), dev.address(), dev2.address(), 16384, DataType.FLOAT32,
                            ReduceOp.SUM, 1)));
            row("cudaStreamQuery", perCallNanos(s, i -> cudaStreamQuery(s)));
            int paramSize = (int) Pointer.sizeof(CUstreamBatchMemOpParams_v1.class);
            System.out.println("# sizeof(CUstreamBatchMemOpParams) = " + paramSize);
            CUstreamBatchMemOpParams_v1 params = new CUstreamBatchMemOpParams_v1(32);
            for (int k : new int[] {1, 2, 4, 8, 16}) {
                fillBatch(params, paramSize, k, flag);
                int kk = k;
                row("cuStreamBatchMemOp, " + k + " ops (waits satisfied, writes)", perCallNanos(s,
                        i -> check(cuStreamBatchMemOp(s, kk, params, 0), "batch")));
            }
            // graphs: N stages of (wait satisfied, D2H copy 64 KB, write) captured once, launched per call
            for (int stages : new int[] {4, 16, 64, 128}) {
                CUgraph_st g = new CUgraph_st();
                check(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), "begin capture");
                for (int k = 0; k < stages; k++) {
                    cs.waitValue32(host, 0, 1);
                    cs.copy(host.deviceAddress() + 4096 + (k % 64) * small, dev.address(), small);
                    cs.writeValue32(host, 64, k);
                }
                check(cudaStreamEndCapture(s, g), "end capture");
                CUgraphExec_st exec = new CUgraphExec_st();
                long t0 = System.nanoTime();
                check(cudaGraphInstantiate(exec, g, 0L), "instantiate");
                long inst = System.nanoTime() - t0;
                check(cudaGraphUpload(exec, s), "upload");
                double eager = perCallNanos(s, i -> {
                    if (i % 10 == 0) {
                        for (int k = 0; k < stages; k++) {
                            cs.waitValue32(host, 0, 1);
                            cs.copy(host.deviceAddress() + 4096 + (k % 64) * small, dev.address(), small);
                            cs.writeValue32(host, 64, k);
                        }
                    }
                }) * 10;
                double launch = perCallNanos(s, i -> {
                    if (i % 10 == 0) {
                        check(cudaGraphLaunch(exec, s), "launch");
                    }
                }) * 10;
                row("graph of " + stages + " x (wait, copy, write): cudaGraphLaunch", launch);
                row("  the same " + (3 * stages) + " operations enqueued eagerly", eager);
                row("  cudaGraphInstantiate (once)", inst);
                cudaGraphExecDestroy(exec);
                cudaGraphDestroy(g);
            }
            ev.close();
            host.close();
            dev.close();
            dev2.close();
            cs.close();
            other.close();
        }
    }

    /** One 3D batch operation per run: {@code rows[k]} rows of {@code width} bytes, each side at its own pitch. */
    static cudaMemcpy3DBatchOp runs(long[] dst, long dstPitch, long[] src, long srcPitch, long width, long[] rows) {
        cudaMemcpy3DBatchOp ops = new cudaMemcpy3DBatchOp(rows.length);
        for (int k = 0; k < rows.length; k++) {
            cudaMemcpy3DBatchOp op = ops.getPointer(k);
            op.src().type(cudaMemcpyOperandTypePointer).op_ptr_ptr(new Raw().set(src[k])).op_ptr_rowLength(srcPitch)
                    .op_ptr_layerHeight(rows[k]);
            op.dst().type(cudaMemcpyOperandTypePointer).op_ptr_ptr(new Raw().set(dst[k])).op_ptr_rowLength(dstPitch)
                    .op_ptr_layerHeight(rows[k]);
            op.extent().width(width).height(rows[k]).depth(1);
            op.srcAccessOrder(cudaMemcpySrcAccessOrderStream).flags(0);
        }
        return ops;
    }

    /** A Pointer whose address is set in place. */
    static final class Raw extends Pointer {
        Raw set(long a) {
            address = a;
            return this;
        }
    }

    /** k operations alternating: a satisfied wait on {@code flag}, a write 64 bytes further. */
    static void fillBatch(CUstreamBatchMemOpParams_v1 params, int paramSize, int k, long flag) {
        long base = params.address();
        UNSAFE.setMemory(base, (long) paramSize * k, (byte) 0);
        for (int i = 0; i < k; i++) {
            long p = base + (long) i * paramSize;
            if (i % 2 == 0) {
                UNSAFE.putInt(p, CU_STREAM_MEM_OP_WAIT_VALUE_32);
                UNSAFE.putLong(p + 8, flag);
                UNSAFE.putInt(p + 16, 1);
                UNSAFE.putInt(p + 24, CU_STREAM_WAIT_VALUE_GEQ);
            } else {
                UNSAFE.putInt(p, CU_STREAM_MEM_OP_WRITE_VALUE_32);
                UNSAFE.putLong(p + 8, flag + 64L * (1 + i));
                UNSAFE.putInt(p + 16, i);
                UNSAFE.putInt(p + 24, CU_STREAM_WRITE_VALUE_DEFAULT);
            }
        }
    }
}
