package io.flexlink.bench.ddp;

import io.flexlink.cuda.CudaModule;
import io.flexlink.cuda.KernelCompiler;
import io.flexlink.cuda.ddp.StreamKernel;
import io.flexlink.runtime.RuntimeStream;

/**
 * The perceptron's arithmetic on the CUDA backend: the kernels of {@code mlp.cu}, compiled by NVRTC for the
 * device (cached on disk) as FlexLink's reduction kernels are, each launched with a reused parameter block
 * (a step allocates nothing). One instance per rank; its thread enqueues.
 */
final class CudaMlpMath implements MlpMath {
    static final String RESOURCE = "/io/flexlink/bench/ddp/mlp.cu";
    private static final int THREADS = 256;
    private static final int MAX_BLOCKS = 4096;
    private static final int TILE = 64;

    private final CudaModule module;
    private final StreamKernel gemm;
    private final StreamKernel biasAct;
    private final StreamKernel reluBackward;
    private final StreamKernel mseGrad;
    private final StreamKernel mseLoss;
    private final StreamKernel columnSums;
    private final StreamKernel sgd;

    CudaMlpMath(KernelCompiler compiler, int device) {
        module = StreamKernel.load(compiler, device, RESOURCE, StreamKernel.source(CudaMlpMath.class, RESOURCE));
        gemm = new StreamKernel(module, "mlp_gemm", 8);
        biasAct = new StreamKernel(module, "mlp_bias_act", 6);
        reluBackward = new StreamKernel(module, "mlp_relu_backward", 4);
        mseGrad = new StreamKernel(module, "mlp_mse_grad", 5);
        mseLoss = new StreamKernel(module, "mlp_mse_loss", 5);
        columnSums = new StreamKernel(module, "mlp_column_sums", 4);
        sgd = new StreamKernel(module, "mlp_sgd", 4);
    }

    private static int blocks(long n) {
        return StreamKernel.blocks(n, THREADS, MAX_BLOCKS);
    }

    @Override
    public void gemm(RuntimeStream s, boolean ta, boolean tb, int m, int n, int k, long a, long b, long c) {
        gemm.arg(0, a).arg(1, b).arg(2, c).argInt(3, m).argInt(4, n).argInt(5, k).argInt(6, ta ? 1 : 0)
                .argInt(7, tb ? 1 : 0).launch(s, (n + TILE - 1) / TILE, (m + TILE - 1) / TILE, 16, 16);
    }

    @Override
    public void biasActivation(RuntimeStream s, long y, long bias, long z, int rows, int cols, boolean relu) {
        long n = (long) rows * cols;
        biasAct.arg(0, y).arg(1, bias).arg(2, z).arg(3, n).argInt(4, cols).argInt(5, relu ? 1 : 0)
                .launch(s, blocks(n), 1, THREADS, 1);
    }

    @Override
    public void reluBackward(RuntimeStream s, long dz, long y, long dy, long n) {
        reluBackward.arg(0, dz).arg(1, y).arg(2, dy).arg(3, n).launch(s, blocks(n), 1, THREADS, 1);
    }

    @Override
    public void meanSquaredError(RuntimeStream s, long out, long target, long dout, long n, float gradScale,
                                 long loss, float lossScale) {
        mseGrad.arg(0, out).arg(1, target).arg(2, dout).arg(3, n).argFloat(4, gradScale)
                .launch(s, blocks(n), 1, THREADS, 1);
        // one block of exactly 256 threads: the kernel's fixed reduction order depends on it
        mseLoss.arg(0, out).arg(1, target).arg(2, loss).arg(3, n).argFloat(4, lossScale).launch(s, 1, 1, 256, 1);
    }

    @Override
    public void columnSums(RuntimeStream s, long dy, long db, int rows, int cols) {
        columnSums.arg(0, dy).arg(1, db).argInt(2, rows).argInt(3, cols)
                .launch(s, (cols + THREADS - 1) / THREADS, 1, THREADS, 1);
    }

    @Override
    public void sgd(RuntimeStream s, long w, long g, long n, float lr) {
        sgd.arg(0, w).arg(1, g).arg(2, n).argFloat(3, lr).launch(s, blocks(n), 1, THREADS, 1);
    }

    @Override
    public void close() {
        for (StreamKernel k : new StreamKernel[] {gemm, biasAct, reluBackward, mseGrad, mseLoss, columnSums, sgd}) {
            k.close();
        }
        module.close();
    }
}
