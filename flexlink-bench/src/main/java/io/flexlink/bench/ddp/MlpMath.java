package io.flexlink.bench.ddp;

import io.flexlink.runtime.RuntimeStream;

/**
 * The arithmetic of the example's multi-layer perceptron, on one backend's device memory, enqueued on a
 * stream in order. Addresses are device addresses of FLOAT32 arrays, row-major. Every operation sums in a
 * fixed order, so that the same inputs give the same bits on every rank.
 */
interface MlpMath extends AutoCloseable {
    /**
     * {@code c[m x n] = op(a) * op(b)}: {@code a} is m x k (k x m when {@code ta}), {@code b} k x n (n x k when
     * {@code tb}).
     */
    void gemm(RuntimeStream s, boolean ta, boolean tb, int m, int n, int k, long a, long b, long c);

    /** {@code y[r][c] += bias[c]}, then {@code z = relu ? max(y, 0) : y} ({@code z} may be {@code y}). */
    void biasActivation(RuntimeStream s, long y, long bias, long z, int rows, int cols, boolean relu);

    /** {@code dy = y > 0 ? dz : 0} ({@code dy} may be {@code dz}). */
    void reluBackward(RuntimeStream s, long dz, long y, long dy, long n);

    /** {@code dout = gradScale * (out - target)} and {@code *loss = lossScale * sum((out - target)^2)}. */
    void meanSquaredError(RuntimeStream s, long out, long target, long dout, long n, float gradScale, long loss,
                          float lossScale);

    /** {@code db[c] = sum over r of dy[r][c]}. */
    void columnSums(RuntimeStream s, long dy, long db, int rows, int cols);

    /** {@code w -= lr * g}. */
    void sgd(RuntimeStream s, long w, long g, long n, float lr);

    @Override
    void close();
}
