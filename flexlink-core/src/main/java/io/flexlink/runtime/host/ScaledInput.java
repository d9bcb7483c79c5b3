package io.flexlink.runtime.host;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.Scratch;

/**
 * A ring rank's input divided by the rank count, for a floating-point AVG. The average divides each
 * input before adding, as NCCL does ({@link io.flexlink.runtime.ReduceChain}); the ring adds a
 * neighbour's running result to this rank's own input, so the input is divided once, up front, into
 * scratch, and the ring then sums. Calls of one communicator may come on different streams, so a call
 * that overwrites the buffer first waits until the previous one has stopped reading it. Used under the
 * communicator's lock.
 */
final class ScaledInput implements AutoCloseable {
    private final int ranks;
    private final Scratch buffer;
    /** Recorded after the last read of the buffer by the latest average that used it. */
    private final RuntimeEvent lastRead;
    private boolean used;

    ScaledInput(HostBackend backend, int device, int ranks) {
        this.ranks = ranks;
        this.buffer = new Scratch(backend, device);
        this.lastRead = backend.createEvent(device, false);
    }

    /** True when a call of {@code op} on {@code type} averages floating-point values over several ranks. */
    boolean applies(DataType type, ReduceOp op) {
        return op == ReduceOp.AVG && type.isFloatingPoint() && ranks > 1;
    }

    /** {@code elements} of {@code send} divided by the rank count, in the buffer: x / 2n + x / 2n is x / n exactly. */
    long divide(long send, long elements, DataType type, RuntimeStream stream) {
        long dst = buffer.ensure(elements * type.size());
        if (used) {
            stream.waitEvent(lastRead); // the previous average may run on another stream, still reading
        }
        stream.reduce(dst, send, send, elements, type, ReduceOp.AVG, 2 * ranks);
        return dst;
    }

    /** After a call's last read of the buffer, on its stream: the next {@link #divide} waits for this point. */
    void done(RuntimeStream stream) {
        stream.record(lastRead);
        used = true;
    }

    @Override
    public void close() {
        buffer.close();
        lastRead.close();
    }
}
