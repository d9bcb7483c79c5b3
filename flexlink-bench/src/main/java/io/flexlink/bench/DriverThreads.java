package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Phaser;
import java.util.function.IntFunction;

/**
 * nccl-tests' -t: the threads of this process, thread {@code t} driving local ranks
 * {@code t*g .. (t+1)*g-1}. The calling thread is thread 0 (as nccl-tests' main thread); the others are
 * workers that live for the run. {@link #barrier()} is the threads' barrier of -z 1 and -z 3, plus the
 * processes' with --from-env. A thread that fails breaks the barrier, so the others do not wait forever.
 */
final class DriverThreads implements AutoCloseable {
    private final int threads;
    private final int ranksPerThread;
    private final ExecutorService workers;
    /** The threads' barrier of the current {@link #run}; terminated by a failure, so no thread waits on it for ever. */
    private volatile Phaser barrier;
    /** Between the processes of a --from-env job (null otherwise). */
    private final RankGather processes;

    DriverThreads(int threads, int ranksPerThread, RankGather processes) {
        this.threads = threads;
        this.ranksPerThread = ranksPerThread;
        this.processes = processes;
        this.workers = threads > 1 ? Executors.newFixedThreadPool(threads - 1, r -> {
            Thread t = new Thread(r, "flexlink-perf-thread");
            t.setDaemon(true);
            return t;
        }) : null;
    }

    int count() {
        return threads;
    }

    /** First local rank of thread {@code t}. */
    int from(int t) {
        return t * ranksPerThread;
    }

    /** One past the last local rank of thread {@code t}. */
    int to(int t) {
        return (t + 1) * ranksPerThread;
    }

    /** Runs {@code work} on every thread at once; returns each thread's result, or throws the first failure. */
    <T> List<T> run(IntFunction<T> work) {
        barrier = new Phaser(threads);
        List<Future<T>> others = new ArrayList<>();
        for (int t = 1; t < threads; t++) {
            int thread = t;
            others.add(workers.submit(() -> guarded(work, thread)));
        }
        List<T> out = new ArrayList<>();
        RuntimeException failure = null;
        try {
            out.add(guarded(work, 0));
        } catch (RuntimeException e) {
            failure = e;
        }
        for (Future<T> f : others) {
            try {
                out.add(f.get());
            } catch (ExecutionException e) {
                if (failure == null || failure instanceof Broken) {
                    failure = e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause()
                            : new IllegalStateException(e.getCause());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        if (failure != null) {
            throw failure;
        }
        return out;
    }

    private <T> T guarded(IntFunction<T> work, int thread) {
        try {
            return work.apply(thread);
        } catch (RuntimeException | Error e) {
            barrier.forceTermination(); // the others' barrier waits, now and later, end with Broken
            throw e;
        }
    }

    /** Waits for the other threads (and, with --from-env, the other processes). */
    void barrier() {
        if (threads > 1 && barrier.arriveAndAwaitAdvance() < 0) {
            throw new Broken();
        }
        if (processes != null) {
            processes.barrier();
        }
    }

    /** This thread's barrier was broken by another thread's failure (which is the one reported). */
    static final class Broken extends FlexLinkException {
        private static final long serialVersionUID = 1L;

        Broken() {
            super(io.flexlink.Result.INTERNAL_ERROR, "another thread of the run failed");
        }
    }

    @Override
    public void close() {
        if (workers != null) {
            workers.shutdownNow();
        }
    }
}
