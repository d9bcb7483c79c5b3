package io.flexlink.comm;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watchdog ({@code flexlink.timeout}): one daemon thread, {@code flexlink-watchdog}, shared by every
 * communicator that has a timeout, started with the first and gone with the last. Each round it asks
 * every communicator to check itself ({@link CommLifecycle#watchdogCheck}): poll its errors (so that
 * an error of enqueued work is noticed and reaches the peers without the application polling), and abort
 * it when a call is overdue (running longer than the timeout, see {@link CallWatch}), logging one WARN
 * line with the path and the ranks it was waiting on and the communicator's flight record
 * ({@link FlightRecorder}). Rounds come every tenth of the shortest timeout watched, between 1 and 100 ms;
 * a round reads a few words per communicator and costs the calling threads nothing. On by default
 * ({@code flexlink.timeout} 10 minutes, as PyTorch's).
 *
 * <p>Time comes from an injectable clock; a watchdog made without a thread ({@link #manual}) runs a
 * round only when {@link #tick()} is called, which makes the timeout logic testable without sleeping.
 */
final class Watchdog {
    private static final Logger LOG = LoggerFactory.getLogger(Watchdog.class);
    private static final long MIN_PERIOD = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long MAX_PERIOD = TimeUnit.MILLISECONDS.toNanos(100);

    /** The process's watchdog, on {@link System#nanoTime()}. */
    static final Watchdog SHARED = new Watchdog(System::nanoTime, true, FlightRecorder.ofProcess());

    private final LongSupplier clock;
    private final boolean threaded;
    private final FlightRecorder recorder;
    private final Set<CommLifecycle> watched = ConcurrentHashMap.newKeySet();
    private Thread thread;

    private Watchdog(LongSupplier clock, boolean threaded, FlightRecorder recorder) {
        this.clock = clock;
        this.threaded = threaded;
        this.recorder = recorder;
    }

    /** A watchdog on {@code clock} with no thread: rounds run when {@link #tick()} is called. */
    static Watchdog manual(LongSupplier clock, FlightRecorder recorder) {
        return new Watchdog(clock, false, recorder);
    }

    long now() {
        return clock.getAsLong();
    }

    /** Where the communicators it aborts leave their flight record. */
    FlightRecorder recorder() {
        return recorder;
    }

    void register(CommLifecycle c) {
        watched.add(c);
        if (threaded) {
            synchronized (this) {
                if (thread == null) {
                    thread = new Thread(this::loop, "flexlink-watchdog");
                    thread.setDaemon(true);
                    thread.start();
                }
            }
        }
    }

    void unregister(CommLifecycle c) {
        watched.remove(c);
    }

    /** Communicators watched now. */
    int watched() {
        return watched.size();
    }

    /** One round: every watched communicator checks itself at the clock's current time. */
    void tick() {
        long now = clock.getAsLong();
        for (CommLifecycle c : watched) {
            try {
                c.watchdogCheck(now);
            } catch (RuntimeException e) {
                LOG.warn("watchdog: checking {} failed: {}", c, e.toString());
            }
        }
    }

    private void loop() {
        while (true) {
            long period = MAX_PERIOD;
            synchronized (this) {
                if (watched.isEmpty()) {
                    thread = null; // a later register starts a new thread
                    return;
                }
            }
            for (CommLifecycle c : watched) {
                period = Math.min(period, Math.max(MIN_PERIOD, c.timeoutNanos() / 10));
            }
            tick();
            LockSupport.parkNanos(period);
        }
    }
}
