package io.flexlink.balance;

import java.nio.file.Path;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Persists the tuning table off the calling thread. The balancer reports a tuned channel from inside a
 * collective call, and a file write there would put disk latency on the hot path; here a request only
 * marks the table dirty and, when no write is pending, hands one write to the executor. Requests that
 * arrive while a write is pending are folded into it (the write serializes the table as it is then).
 * {@link #close()} writes what is still pending on the closing thread, so nothing tuned is lost.
 */
public final class TuningCacheWriter implements Consumer<TuningTable>, AutoCloseable {
    private final Path dir;
    private final String fingerprint;
    private final String version;
    private final Executor executor;
    private final ThreadPoolExecutor ownExecutor;
    private final AtomicBoolean pending = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile TuningTable latest;

    /** Writes on one daemon thread of its own, started at the first write and gone after a second idle. */
    public TuningCacheWriter(Path dir, String fingerprint, String version) {
        this(dir, fingerprint, version, null);
    }

    /** Writes on {@code executor} (tests pass one they run by hand); null: a thread of its own. */
    public TuningCacheWriter(Path dir, String fingerprint, String version, Executor executor) {
        this.dir = dir;
        this.fingerprint = fingerprint;
        this.version = version;
        if (executor == null) {
            ownExecutor = new ThreadPoolExecutor(0, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "flexlink-tuning-cache");
                t.setDaemon(true);
                return t;
            });
            this.executor = ownExecutor;
        } else {
            ownExecutor = null;
            this.executor = executor;
        }
    }

    /** Asks for {@code table} to be written; returns at once. Ignored after {@link #close()}. */
    @Override
    public void accept(TuningTable table) {
        latest = table;
        if (!closed.get() && pending.compareAndSet(false, true)) {
            try {
                executor.execute(this::writePending);
            } catch (RejectedExecutionException e) {
                writePending(); // closed meanwhile: write it here rather than lose it
            }
        }
    }

    /** True while a requested write has not started yet. */
    public boolean pending() {
        return pending.get();
    }

    private void writePending() {
        // cleared before serializing: a request arriving during the write schedules another one
        if (pending.compareAndSet(true, false)) {
            TuningTable t = latest;
            if (t != null) {
                t.save(dir, fingerprint, version);
            }
        }
    }

    /** Lets a write under way finish, then writes any pending request on this thread. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (ownExecutor != null) {
                ownExecutor.shutdown();
                try { // a write under way (of an older table) lands before the last one below
                    ownExecutor.awaitTermination(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            writePending();
        }
    }
}
