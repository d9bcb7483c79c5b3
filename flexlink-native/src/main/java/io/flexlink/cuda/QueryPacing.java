package io.flexlink.cuda;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * How often the streams of one device are asked for faults ({@code cudaStreamQuery}, {@link StreamStatus#failure}).
 * A fault of finished work is sticky for the device's context, so one clean answer from any of a device's streams
 * says what a query of each of the others would: after it, the device's streams are not asked again for an
 * interval. Several communicators on one device (eight ranks of one GPU, or a data-parallel and a tensor-parallel
 * communicator of one rank) each check their health at every call; without this, each asked the same device again
 * (4 to 6 µs a query on a busy GPU). An answer that found a fault is not shared: every stream then asks for itself
 * and keeps what it finds. A fault that is a stream's own (a destroyed handle) is found by that stream's own
 * query, which the device's answers put off for at most {@link #STALE} intervals: communicators polling in turn
 * could otherwise keep the device answered for ever. A stream whose device is only assumed
 * ({@link CudaStream#deviceAssumed}) is paced alone.
 */
final class QueryPacing {
    /** The device of a stream paced alone. */
    static final int ALONE = -1;
    /** A stream not asked itself for this many intervals is asked whatever its device's answers say. */
    static final int STALE = 32;

    private final long interval;
    private final LongSupplier clock;
    /** Per device: when one of its streams last answered without a fault (the clock's nanoseconds). */
    private final AtomicLongArray cleanAt;

    QueryPacing(int devices, long intervalNanos, LongSupplier clock) {
        this.interval = intervalNanos;
        this.clock = clock;
        this.cleanAt = new AtomicLongArray(Math.max(devices, 0));
        long start = clock.getAsLong() - intervalNanos;
        for (int d = 0; d < devices; d++) {
            cleanAt.set(d, start);
        }
    }

    long now() {
        return clock.getAsLong();
    }

    /** The interval between two queries of a stream, in the clock's nanoseconds. */
    long interval() {
        return interval;
    }

    /**
     * Whether a stream of {@code device} ({@link #ALONE} for one paced alone), last asked at {@code streamAskedAt},
     * is to be asked at {@code now}: neither it nor, on a known device, any stream of its device answered within
     * the interval; or it was not asked itself for {@link #STALE} intervals.
     */
    boolean due(int device, long streamAskedAt, long now) {
        long since = now - streamAskedAt;
        return since >= interval && (device == ALONE || now - cleanAt.get(device) >= interval
                || since >= STALE * interval);
    }

    /** A stream of {@code device} answered at {@code now} without a fault. */
    void clean(int device, long now) {
        if (device != ALONE) {
            cleanAt.accumulateAndGet(device, now, Math::max); // a late writer never moves the time back
        }
    }
}
