package io.flexlink.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Stream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Bounded waits for tests: a condition is polled until it holds or a limit passes, so that a hang
 * becomes a failure with a message instead of a stuck build. The limit is a bound, never the means of
 * synchronization: the test goes on the moment the condition holds.
 */
public final class Bounded {
    private Bounded() {
    }

    /** Polls {@code condition} until it holds (true) or {@code limit} passed (false). */
    public static boolean await(BooleanSupplier condition, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline >= 0) {
                return condition.getAsBoolean();
            }
            LockSupport.parkNanos(100_000);
        }
        return true;
    }

    /** Fails with {@code what} unless {@code condition} holds within {@code limit}. */
    public static void within(Duration limit, BooleanSupplier condition, Supplier<String> what) {
        assertTrue(await(condition, limit), () -> "not within " + limit.toMillis() + " ms: " + what.get());
    }

    /** Fails unless {@code stream} finished everything enqueued so far within {@code limit}. */
    public static void idle(Stream stream, Duration limit) {
        within(limit, stream::isIdle, () -> stream + " is still blocked");
    }

    /** The live threads FlexLink started (their names start with {@code flexlink-}). */
    public static List<String> flexlinkThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("flexlink-")).sorted().collect(Collectors.toList());
    }

    /** Fails unless FlexLink's threads are back to at most {@code baseline} within {@code limit} (exiting threads). */
    public static void threadsBackTo(int baseline, Duration limit) {
        within(limit, () -> flexlinkThreads().size() <= baseline,
                () -> "FlexLink threads: " + flexlinkThreads() + " (baseline " + baseline + ")");
    }
}
