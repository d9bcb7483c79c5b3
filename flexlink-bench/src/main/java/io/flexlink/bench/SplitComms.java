package io.flexlink.bench;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * NCCL_TESTS_SPLIT's communicators: every local rank's communicator of the job split by the rank's color
 * ({@link RankLayout}) with {@code Communicator.split}, keyed by {@link RankLayout#splitKey} (its job rank)
 * so that the sub-communicator keeps the job's order; the raw NCCL baseline splits by the same
 * ({@link RawNcclPlan}). A split is collective and
 * blocks until every member is in, so each local rank splits from a thread of its own, all at once (a
 * rank whose peers never arrive gives up after {@code flexlink.initTimeout}, as the split's rounds do).
 */
final class SplitComms {
    private SplitComms() {
    }

    /** The sub-communicators of {@code parents} (local rank order); the parents stay open, the caller's. */
    static Communicator[] split(Communicator[] parents, RankLayout layout) {
        ExecutorService pool = Executors.newFixedThreadPool(parents.length, r -> {
            Thread t = new Thread(r, "flexlink-perf-split");
            t.setDaemon(true);
            return t;
        });
        List<Future<Communicator>> futures = new ArrayList<>();
        try {
            for (Communicator parent : parents) {
                int rank = parent.rank();
                futures.add(pool.submit(() -> parent.split(layout.color(rank), layout.splitKey(rank)).orElseThrow(() ->
                        new FlexLinkException(Result.INTERNAL_ERROR, "split: rank " + rank + " got no communicator "
                                + "for color " + layout.color(rank)))));
            }
            Communicator[] children = new Communicator[parents.length];
            FlexLinkException failure = null;
            for (int i = 0; i < parents.length; i++) {
                try {
                    children[i] = futures.get(i).get();
                } catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause() instanceof FlexLinkException ? (FlexLinkException) e.getCause()
                                : new FlexLinkException(Result.INTERNAL_ERROR, "split failed: " + e.getCause(),
                                e.getCause());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new FlexLinkException(Result.INTERNAL_ERROR, "split interrupted", e);
                }
            }
            if (failure != null) {
                for (Communicator c : children) {
                    if (c != null) {
                        c.abort();
                        c.close();
                    }
                }
                throw failure;
            }
            return children;
        } finally {
            pool.shutdownNow();
        }
    }
}
