package io.flexlink.bench.ddp;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.cuda.KernelCompiler;
import io.flexlink.cuda.ddp.CudaGradientCast;
import io.flexlink.ddp.GradientBuckets;
import io.flexlink.ddp.GradientBucketsBuilder;
import io.flexlink.ddp.GradientCast;
import io.flexlink.ddp.Parameter;
import io.flexlink.ddp.host.HostGradientCast;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * One rank of data-parallel training: its shard of each batch, a replica of the student network, and
 * gradient buckets over the communicator. With no communicator it is the single-rank reference (plain SGD
 * on its batch, no buckets). Each step: forward, loss, backward marking each layer's gradients ready as
 * soon as they are enqueued, {@code finish}, SGD; the loss of each step stays on the device until the end.
 */
final class RankTrainer implements AutoCloseable {
    private final TrainOptions o;
    private final Backend backend;
    private final Communicator comm;
    private final MlpMath math;
    private final RuntimeStream compute;
    private final Mlp model;
    private final SyntheticData data;
    private final DeviceMemory losses;
    private final GradientCast cast;
    private final GradientBuckets buckets;
    private final Parameter[] params;
    private final int rows;
    private final Mlp.LayerReady readyLayer;
    /** Met by every rank of the process before any of them frees device memory ({@link #close()}). */
    private final Runnable allDone;
    /** The weights' digest and every rank's (sameEverywhere), allocated once: nothing is freed between collectives. */
    private final DeviceMemory digest;
    private final DeviceMemory digests;
    /** Set when {@link #run()} returned: only then does {@link #close()} meet the other ranks. */
    private boolean finished;

    RankTrainer(TrainOptions o, Backend backend, Communicator comm, int rank, int device, KernelCompiler compiler) {
        this(o, backend, comm, rank, device, compiler, () -> { }, () -> { });
    }

    /**
     * @param kernelsLoaded run once this rank's kernels are loaded, before its first collective (the buckets'
     *     layout agreement): ranks of one process sharing a GPU meet there, because loading a CUDA module
     *     waits for the device, and the device may be waiting inside another rank's collective for this one
     * @param allDone run in {@link #close()} once this rank's work is done, before it frees device memory: for the
     *     same reason, since {@code cudaFree} waits for the device (ranks of one process sharing a GPU meet there)
     */
    RankTrainer(TrainOptions o, Backend backend, Communicator comm, int rank, int device, KernelCompiler compiler,
                Runnable kernelsLoaded, Runnable allDone) {
        this.o = o;
        this.allDone = allDone;
        this.backend = backend;
        this.comm = comm;
        this.rows = o.batch();
        boolean cuda = backend.name().equals("cuda");
        this.math = cuda ? new CudaMlpMath(compiler, device) : new HostMlpMath();
        this.compute = backend.createStream(device, "train.compute");
        this.data = new SyntheticData(backend, math, compute, device, o, rank, rows);
        this.model = new Mlp(backend, math, device, o.widths(), rows, o.contiguousGradients());
        model.initialize(o.seed(), 1.0f, false);
        this.losses = backend.allocate(device, 4L * (o.steps() + 1));
        this.digest = comm == null ? null : backend.allocate(device, 32);
        this.digests = comm == null ? null : backend.allocate(device, 32L * comm.size());
        this.params = new Parameter[model.parameters()];
        if (comm == null) {
            cast = null;
            buckets = null;
        } else {
            cast = switch (o.cast()) {
                case "bf16" -> cuda ? new CudaGradientCast(compiler, device, DataType.BFLOAT16)
                        : new HostGradientCast(backend, device, DataType.BFLOAT16);
                case "fp16" -> cuda ? new CudaGradientCast(compiler, device, DataType.FLOAT16)
                        : new HostGradientCast(backend, device, DataType.FLOAT16);
                default -> null;
            };
            kernelsLoaded.run();
            GradientBucketsBuilder b = GradientBuckets.builder(comm, backend).config(o.config())
                    .reduction(o.average() ? ReduceOp.AVG : ReduceOp.SUM, o.average() ? 1.0 : 1.0 / comm.size())
                    .rebuildFromReadyOrder(o.rebuild()).cast(cast);
            for (int p = 0; p < params.length; p++) {
                String name = "fc" + (p / 2 + 1) + (p % 2 == 0 ? ".weight" : ".bias");
                params[p] = b.register(name, io.flexlink.Buffer.wrap(model.gradient(p), 4 * model.count(p), device),
                        model.count(p), DataType.FLOAT32);
            }
            buckets = b.build();
        }
        this.readyLayer = l -> {
            buckets.ready(params[2 * l + 1], compute);
            buckets.ready(params[2 * l], compute);
        };
    }

    /** One step on step {@code step}'s data, writing its loss to slot {@code lossSlot}. */
    private void step(int step, int lossSlot, StepMode mode, float lr) {
        int outputs = rows * o.widths()[o.widths().length - 1];
        long out = model.forward(compute, data.input(step));
        math.meanSquaredError(compute, out, data.target(step), model.dOut, outputs, 2f / outputs,
                losses.address() + 4L * lossSlot, 1f / outputs);
        boolean sync = buckets != null && mode != StepMode.COMPUTE_ONLY;
        model.backward(compute, data.input(step), sync && mode == StepMode.OVERLAP ? readyLayer : null);
        if (sync) {
            if (mode == StepMode.AFTER_BACKWARD) {
                for (int l = model.layers - 1; l >= 0; l--) {
                    readyLayer.ready(l);
                }
            }
            buckets.finish(compute);
        }
        model.sgd(compute, lr);
    }

    RankResult run() {
        for (int s = 0; s < o.steps(); s++) {
            step(s, s, StepMode.OVERLAP, o.lr());
        }
        compute.synchronize();
        String weights = model.digest();
        boolean same = comm == null || sameEverywhere(weights);
        if (comm != null) { // the loss of the whole batch: the mean of the ranks' means (equal shards)
            comm.allReduce(losses.address(), losses.address(), o.steps(), DataType.FLOAT32, ReduceOp.AVG, compute);
            compute.synchronize();
        }
        float[] curve = new float[o.steps()];
        ByteBuffer host = ByteBuffer.allocateDirect(4 * o.steps()).order(ByteOrder.nativeOrder());
        backend.download(host, losses.address());
        host.asFloatBuffer().get(curve);
        double[] medians = buckets == null || o.timingRounds() == 0 ? new double[0] : time();
        finished = true;
        return new RankResult(backend.name(), comm == null ? 0 : comm.rank(), curve, weights, same, medians,
                comm == null ? List.of() : comm.stats().paths(), buckets == null ? List.of() : buckets.layout(),
                model.bytes());
    }

    /**
     * Times {@code timingRounds} steps of each mode after training, the modes in rotating order so that a
     * drift of the machine favours none, with the learning rate 0 so that the trained weights stay as they
     * are. Each step is timed from its first enqueue to the end of its SGD on the device.
     */
    private double[] time() {
        StepMode[] modes = StepMode.values();
        double[][] ms = new double[modes.length][o.timingRounds()];
        for (int round = -1; round < o.timingRounds(); round++) { // round -1: warm-up of every mode
            for (int i = 0; i < modes.length; i++) {
                StepMode m = modes[(i + Math.max(round, 0)) % modes.length];
                long t0 = System.nanoTime();
                step(o.steps() + Math.max(round, 0), o.steps(), m, 0f);
                compute.synchronize();
                if (round >= 0) {
                    ms[m.ordinal()][round] = (System.nanoTime() - t0) / 1e6;
                }
            }
        }
        double[] medians = new double[modes.length];
        for (int m = 0; m < modes.length; m++) {
            Arrays.sort(ms[m]);
            int n = ms[m].length;
            medians[m] = n % 2 == 1 ? ms[m][n / 2] : (ms[m][n / 2 - 1] + ms[m][n / 2]) / 2;
        }
        return medians;
    }

    /** True when every rank's digest equals {@code weights}: an AllGather of the 32 digest bytes. */
    private boolean sameEverywhere(String weights) {
        byte[] mine = HexFormat.of().parseHex(weights);
        int n = comm.size();
        backend.upload(digest.address(), ByteBuffer.wrap(mine));
        comm.allGather(digest.address(), digests.address(), 8, DataType.INT32, compute);
        compute.synchronize();
        ByteBuffer all = ByteBuffer.allocate(32 * n);
        backend.download(all, digests.address());
        List<String> differ = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            byte[] theirs = Arrays.copyOfRange(all.array(), 32 * r, 32 * r + 32);
            if (!Arrays.equals(mine, theirs)) {
                differ.add("rank " + r);
            }
        }
        return differ.isEmpty();
    }

    @Override
    public void close() {
        try {
            // the meeting comes before anything below frees device memory or unloads a module (see allDone)
            compute.synchronize();
            if (finished) {
                allDone.run(); // a rank that failed meets no one: its peers' barrier is broken instead
            }
        } finally {
            release();
        }
    }

    private void release() {
        if (buckets != null) {
            buckets.close();
        }
        if (cast instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the gradient cast", e);
            }
        }
        if (digest != null) {
            digest.close();
            digests.close();
        }
        losses.close();
        model.close();
        data.close();
        compute.close();
        math.close();
    }
}
