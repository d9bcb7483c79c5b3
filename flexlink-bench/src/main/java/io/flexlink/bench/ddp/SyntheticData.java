package io.flexlink.bench.ddp;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * One rank's shard of every step's batch, on the device: inputs drawn uniformly from [-1, 1), and targets
 * computed by a fixed teacher network (a ReLU perceptron of its own seed). Row {@code g} of the global batch
 * of step {@code s} depends only on ({@code seed}, {@code s}, {@code g}), so rank {@code r}'s rows
 * {@code [r * rows, (r + 1) * rows)} are exactly those rows of a single rank training on the whole batch.
 */
final class SyntheticData implements AutoCloseable {
    private final DeviceMemory inputs;
    private final DeviceMemory targets;
    private final long inputBytes;
    private final long targetBytes;
    private final int steps;

    SyntheticData(Backend backend, MlpMath math, RuntimeStream s, int device, TrainOptions o, int rank, int rows) {
        int in = o.widths()[0];
        int out = o.widths()[o.widths().length - 1];
        this.steps = o.steps();
        this.inputBytes = 4L * rows * in;
        this.targetBytes = 4L * rows * out;
        inputs = backend.allocate(device, inputBytes * steps);
        targets = backend.allocate(device, targetBytes * steps);
        ByteBuffer host = ByteBuffer.allocateDirect((int) inputBytes).order(ByteOrder.nativeOrder());
        try (Mlp teacher = new Mlp(backend, math, device, new int[] {in, o.teacherHidden(), out}, rows, true)) {
            teacher.initialize(o.seed() ^ 0x7EAC4E5L, 2.0f, true);
            for (int step = 0; step < steps; step++) {
                host.clear();
                for (int i = 0; i < rows; i++) {
                    long globalRow = (long) rank * rows + i;
                    SplittableRandom random = new SplittableRandom(mix(o.seed(), step, globalRow));
                    for (int j = 0; j < in; j++) {
                        host.putFloat((float) (random.nextDouble() * 2 - 1));
                    }
                }
                host.flip();
                backend.upload(input(step), host); // synchronous: the buffer can be refilled at once
                long y = teacher.forward(s, input(step));
                s.copy(target(step), y, targetBytes);
            }
            s.synchronize();
        }
    }

    private static long mix(long seed, long step, long row) {
        long h = seed * 0x9E3779B97F4A7C15L + step * 0xC2B2AE3D27D4EB4FL + row * 0x165667B19E3779F9L;
        return h ^ (h >>> 31);
    }

    /** The device address of this rank's inputs of step {@code step} (modulo the steps generated). */
    long input(int step) {
        return inputs.address() + inputBytes * (step % steps);
    }

    long target(int step) {
        return targets.address() + targetBytes * (step % steps);
    }

    @Override
    public void close() {
        inputs.close();
        targets.close();
    }
}
