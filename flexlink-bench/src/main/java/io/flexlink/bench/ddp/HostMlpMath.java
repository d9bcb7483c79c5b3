package io.flexlink.bench.ddp;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import io.flexlink.runtime.RuntimeStream;

/**
 * The perceptron's arithmetic in plain Java on the host backend, whose device memory is off-heap memory.
 * It runs on the calling thread, which plays the device: before each operation it waits until the stream
 * has run everything enqueued on it (for instance the gradient buckets' reduced gradients joined into the
 * stream by {@code finish}), which gives the operation its place in stream order. Gradients marked ready are
 * then complete at once, and the buckets' AllReduces run on their own stream threads while this thread goes
 * on with backward: the same overlap as on a GPU.
 */
final class HostMlpMath implements MlpMath {
    /** One output row of the GEMM, reused (one rank's math runs on one thread). */
    private float[] row = new float[0];

    private static void inOrder(RuntimeStream s) {
        if (!s.isIdle()) {
            s.synchronize();
        }
    }

    private static float get(long base, long i) {
        return UNSAFE.getFloat(base + 4 * i);
    }

    private static void put(long base, long i, float v) {
        UNSAFE.putFloat(base + 4 * i, v);
    }

    @Override
    public void gemm(RuntimeStream s, boolean ta, boolean tb, int m, int n, int k, long a, long b, long c) {
        inOrder(s);
        if (row.length < n) {
            row = new float[n];
        }
        for (int i = 0; i < m; i++) {
            java.util.Arrays.fill(row, 0, n, 0f);
            // k ascending for every element, as the CUDA kernel sums
            for (int kk = 0; kk < k; kk++) {
                float x = ta ? get(a, (long) kk * m + i) : get(a, (long) i * k + kk);
                if (tb) {
                    for (int j = 0; j < n; j++) {
                        row[j] += x * get(b, (long) j * k + kk);
                    }
                } else {
                    long at = (long) kk * n;
                    for (int j = 0; j < n; j++) {
                        row[j] += x * get(b, at + j);
                    }
                }
            }
            for (int j = 0; j < n; j++) {
                put(c, (long) i * n + j, row[j]);
            }
        }
    }

    @Override
    public void biasActivation(RuntimeStream s, long y, long bias, long z, int rows, int cols, boolean relu) {
        inOrder(s);
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                long i = (long) r * cols + c;
                float v = get(y, i) + get(bias, c);
                put(y, i, v);
                put(z, i, relu ? Math.max(v, 0f) : v);
            }
        }
    }

    @Override
    public void reluBackward(RuntimeStream s, long dz, long y, long dy, long n) {
        inOrder(s);
        for (long i = 0; i < n; i++) {
            put(dy, i, get(y, i) > 0f ? get(dz, i) : 0f);
        }
    }

    @Override
    public void meanSquaredError(RuntimeStream s, long out, long target, long dout, long n, float gradScale,
                                 long loss, float lossScale) {
        inOrder(s);
        float sum = 0f;
        for (long i = 0; i < n; i++) {
            float d = get(out, i) - get(target, i);
            put(dout, i, gradScale * d);
            sum += d * d;
        }
        UNSAFE.putFloat(loss, lossScale * sum);
    }

    @Override
    public void columnSums(RuntimeStream s, long dy, long db, int rows, int cols) {
        inOrder(s);
        for (int c = 0; c < cols; c++) {
            float sum = 0f;
            for (int r = 0; r < rows; r++) {
                sum += get(dy, (long) r * cols + c);
            }
            put(db, c, sum);
        }
    }

    @Override
    public void sgd(RuntimeStream s, long w, long g, long n, float lr) {
        inOrder(s);
        for (long i = 0; i < n; i++) {
            put(w, i, get(w, i) - lr * get(g, i));
        }
    }

    @Override
    public void close() {
        // nothing held
    }
}
