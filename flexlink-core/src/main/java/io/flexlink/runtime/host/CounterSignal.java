package io.flexlink.runtime.host;

import static io.flexlink.runtime.NativeMemory.UNSAFE;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Blocking waits on 32-bit counters in host memory, as {@code cuStreamWaitValue32} does on a GPU.
 * Writers in this process wake waiters of the same stripe; a waiter also re-reads the counter every
 * {@link #POLL_NANOS} so that writes from another process, which cannot signal, are seen too.
 */
final class CounterSignal {
    static final long POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    private static final int STRIPES = 64;
    private static final int SPINS = 64;
    private static final Stripe[] STRIPE = new Stripe[STRIPES];

    static {
        for (int i = 0; i < STRIPES; i++) {
            STRIPE[i] = new Stripe();
        }
    }

    private CounterSignal() {
    }

    private static final class Stripe {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        final AtomicInteger waiters = new AtomicInteger();
    }

    private static Stripe stripe(long address) {
        return STRIPE[(int) ((address >>> 6) ^ (address >>> 14)) & (STRIPES - 1)];
    }

    /** True once the counter is at or past {@code value}, compared wrap-safely like CU_STREAM_WAIT_VALUE_GEQ. */
    static boolean reached(long address, int value) {
        return UNSAFE.getIntVolatile(null, address) - value >= 0;
    }

    /** {@link #reached} when {@code any} is false; else true once {@code (word & value) != 0} (CU_STREAM_WAIT_VALUE_AND). */
    private static boolean reached(long address, int value, boolean any) {
        return any ? (UNSAFE.getIntVolatile(null, address) & value) != 0 : reached(address, value);
    }

    /**
     * Blocks until the counter at {@code address} reaches {@code value} or {@code cancelled} turns true.
     *
     * @return true when reached, false when cancelled
     */
    static boolean await(long address, int value, BooleanSupplier cancelled) {
        return await(address, value, false, cancelled);
    }

    /** Blocks until {@code (word & mask) != 0} or {@code cancelled} turns true; true when reached. */
    static boolean awaitAny(long address, int mask, BooleanSupplier cancelled) {
        return await(address, mask, true, cancelled);
    }

    private static boolean await(long address, int value, boolean any, BooleanSupplier cancelled) {
        for (int i = 0; i < SPINS; i++) {
            if (reached(address, value, any)) {
                return true;
            }
            Thread.onSpinWait();
        }
        Stripe s = stripe(address);
        while (true) {
            if (reached(address, value, any)) {
                return true;
            }
            if (cancelled.getAsBoolean()) {
                return false;
            }
            s.waiters.incrementAndGet();
            s.lock.lock();
            try {
                // re-check after announcing ourselves: a writer that missed our count has already written
                if (!reached(address, value, any)) {
                    s.changed.awaitNanos(POLL_NANOS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return reached(address, value, any);
            } finally {
                s.lock.unlock();
                s.waiters.decrementAndGet();
            }
        }
    }

    /** Wakes the waiters that may be watching {@code address}; call after writing it. */
    static void signal(long address) {
        Stripe s = stripe(address);
        if (s.waiters.get() > 0) {
            s.lock.lock();
            try {
                s.changed.signalAll();
            } finally {
                s.lock.unlock();
            }
        }
    }

    /** Wakes every waiter, so that it re-checks its cancellation. */
    static void wakeAll() {
        for (Stripe s : STRIPE) {
            s.lock.lock();
            try {
                s.changed.signalAll();
            } finally {
                s.lock.unlock();
            }
        }
    }
}
