package io.flexlink.bench.ddp;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A ReLU multi-layer perceptron on one device, for a fixed number of rows per call: its parameters (one
 * buffer, in model order), their gradients (one buffer in model order, or one allocation each), and the
 * activations. Layer {@code l} computes {@code y = x W_l + b_l} ({@code W_l} is {@code in x out}), then ReLU
 * except after the last layer. Parameter {@code 2l} is {@code W_l}, {@code 2l + 1} is {@code b_l}.
 */
final class Mlp implements AutoCloseable {
    /** Called during backward once layer {@code l}'s two gradients have been enqueued. */
    interface LayerReady {
        void ready(int layer);
    }

    final int[] widths;
    final int layers;
    final int rows;
    private final Backend backend;
    private final MlpMath math;
    private final List<DeviceMemory> memory = new ArrayList<>();
    private final long[] param;
    private final long[] grad;
    private final long[] count;
    private final long paramBytes;
    private final long weights;
    private final long[] pre;
    private final long[] post;
    private final long gradA;
    private final long gradB;
    final long dOut;

    Mlp(Backend backend, MlpMath math, int device, int[] widths, int rows, boolean contiguousGradients) {
        this.backend = backend;
        this.math = math;
        this.widths = widths.clone();
        this.layers = widths.length - 1;
        this.rows = rows;
        int n = 2 * layers;
        param = new long[n];
        grad = new long[n];
        count = new long[n];
        long total = 0;
        for (int l = 0; l < layers; l++) {
            count[2 * l] = (long) widths[l] * widths[l + 1];
            count[2 * l + 1] = widths[l + 1];
            total += count[2 * l] + count[2 * l + 1];
        }
        paramBytes = 4 * total;
        weights = alloc(device, paramBytes);
        long g = contiguousGradients ? alloc(device, paramBytes) : 0;
        long at = 0;
        for (int p = 0; p < n; p++) {
            param[p] = weights + at;
            grad[p] = contiguousGradients ? g + at : alloc(device, 4 * count[p]);
            at += 4 * count[p];
        }
        pre = new long[layers];
        post = new long[layers];
        int widest = 0;
        for (int l = 0; l < layers; l++) {
            pre[l] = alloc(device, 4L * rows * widths[l + 1]);
            post[l] = l == layers - 1 ? pre[l] : alloc(device, 4L * rows * widths[l + 1]);
            widest = Math.max(widest, widths[l + 1]);
        }
        gradA = alloc(device, 4L * rows * widest);
        gradB = alloc(device, 4L * rows * widest);
        dOut = alloc(device, 4L * rows * widths[layers]);
    }

    private long alloc(int device, long bytes) {
        DeviceMemory m = backend.allocate(device, bytes);
        memory.add(m);
        return m.address();
    }

    int parameters() {
        return param.length;
    }

    long parameter(int p) {
        return param[p];
    }

    long gradient(int p) {
        return grad[p];
    }

    long count(int p) {
        return count[p];
    }

    /** Bytes of all parameters (and of all gradients). */
    long bytes() {
        return paramBytes;
    }

    /** Uniform weights in ±{@code scale}·sqrt(3 / fan-in), seeded; biases 0, or uniform in ±{@code scale}·0.1. */
    void initialize(long seed, float scale, boolean randomBias) {
        SplittableRandom random = new SplittableRandom(seed);
        ByteBuffer host = ByteBuffer.allocateDirect((int) paramBytes).order(ByteOrder.nativeOrder());
        for (int l = 0; l < layers; l++) {
            double bound = scale * Math.sqrt(3.0 / widths[l]);
            for (long i = 0; i < count[2 * l]; i++) {
                host.putFloat((float) ((random.nextDouble() * 2 - 1) * bound));
            }
            for (long i = 0; i < count[2 * l + 1]; i++) {
                host.putFloat(randomBias ? (float) ((random.nextDouble() * 2 - 1) * 0.1 * scale) : 0f);
            }
        }
        host.flip();
        backend.upload(weights, host);
    }

    /** Enqueues the forward pass of {@link #rows} rows at {@code x}; returns the address of the output. */
    long forward(RuntimeStream s, long x) {
        long in = x;
        for (int l = 0; l < layers; l++) {
            math.gemm(s, false, false, rows, widths[l + 1], widths[l], in, param[2 * l], pre[l]);
            math.biasActivation(s, pre[l], param[2 * l + 1], post[l], rows, widths[l + 1], l < layers - 1);
            in = post[l];
        }
        return post[layers - 1];
    }

    /**
     * Enqueues backward from the gradient in {@link #dOut} (of the output), the last layer first; calls
     * {@code ready} (when not null) as soon as each layer's gradients are enqueued, before the layers below.
     */
    void backward(RuntimeStream s, long x, LayerReady ready) {
        long g = dOut;
        for (int l = layers - 1; l >= 0; l--) {
            long in = l == 0 ? x : post[l - 1];
            // the bias first, then the weight: reverse model order, as autograd produces them
            math.columnSums(s, g, grad[2 * l + 1], rows, widths[l + 1]);
            math.gemm(s, true, false, widths[l], widths[l + 1], rows, in, g, grad[2 * l]);
            if (ready != null) {
                ready.ready(l);
            }
            if (l > 0) {
                long next = g == gradA ? gradB : gradA;
                math.gemm(s, false, true, rows, widths[l], widths[l + 1], g, param[2 * l], next);
                math.reluBackward(s, next, pre[l - 1], next, (long) rows * widths[l]);
                g = next;
            }
        }
    }

    /** Enqueues {@code w -= lr * dw} for every parameter. */
    void sgd(RuntimeStream s, float lr) {
        for (int p = 0; p < param.length; p++) {
            math.sgd(s, param[p], grad[p], count[p], lr);
        }
    }

    /** SHA-256 of the parameters' bytes (after the work on their stream is done). */
    String digest() {
        ByteBuffer host = ByteBuffer.allocateDirect((int) paramBytes);
        backend.download(host, weights);
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(host);
            return HexFormat.of().formatHex(d.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    @Override
    public void close() {
        for (DeviceMemory m : memory) {
            m.close();
        }
    }
}
