package io.flexlink.runtime.host;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RuntimeEvent;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * An event of the host backend. Each record takes the next sequence number when enqueued and publishes
 * it when the stream reaches it; a wait targets the latest record at the time the wait is enqueued,
 * which is CUDA's rule for {@code cudaStreamWaitEvent}.
 */
final class HostEvent implements RuntimeEvent {
    private final boolean timing;
    private final AtomicLong recorded = new AtomicLong();
    private volatile long completed;
    private volatile long completedAtNanos;
    /** The failure of the stream that made the latest completed record, or null. */
    private volatile FlexLinkException failure;

    HostEvent(boolean timing) {
        this.timing = timing;
    }

    /** {@code event} as a host event, or INVALID_ARGUMENT naming {@code what} (null, another backend's). */
    static HostEvent of(String what, RuntimeEvent event) {
        if (event instanceof HostEvent) {
            return (HostEvent) event;
        }
        throw new FlexLinkException(Result.INVALID_ARGUMENT, what + ": event: " + (event == null ? "null"
                : event + " is not an event of the host backend"));
    }

    long nextRecord() {
        return recorded.incrementAndGet();
    }

    long lastRecord() {
        return recorded.get();
    }

    /** Publishes record {@code seq}; {@code failed} is the recording stream's failure, or null. */
    synchronized void complete(long seq, FlexLinkException failed) {
        if (seq > completed) {
            completedAtNanos = System.nanoTime();
            failure = failed;
            completed = seq;
        }
        notifyAll();
    }

    /** The failure of the stream that made the latest completed record, or null when it was healthy. */
    FlexLinkException failure() {
        return failure;
    }

    /** Blocks until record {@code target} has completed or {@code cancelled} turns true. */
    void await(long target, BooleanSupplier cancelled) throws InterruptedException {
        if (completed >= target) {
            return;
        }
        synchronized (this) {
            while (completed < target) {
                if (cancelled.getAsBoolean()) {
                    throw new FlexLinkException(Result.INVALID_USAGE, "event wait cancelled: stream closed");
                }
                wait(TimeUnit.MILLISECONDS.toMillis(5));
            }
        }
    }

    @Override
    public boolean isComplete() {
        return completed >= recorded.get();
    }

    @Override
    public void synchronize() {
        try {
            await(recorded.get(), () -> false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FlexLinkException(Result.SYSTEM_ERROR, "event: synchronize interrupted");
        }
    }

    @Override
    public float elapsedMillis(RuntimeEvent start) {
        HostEvent s = of("elapsedMillis", start);
        if (!timing || !s.timing) {
            throw new FlexLinkException(Result.INVALID_USAGE, "event: elapsed time needs two timing events");
        }
        if (!isComplete() || !s.isComplete()) {
            throw new FlexLinkException(Result.IN_PROGRESS, "event: not complete yet");
        }
        return (completedAtNanos - s.completedAtNanos) / 1e6f;
    }

    @Override
    public void close() {
        // nothing native to release
    }
}
