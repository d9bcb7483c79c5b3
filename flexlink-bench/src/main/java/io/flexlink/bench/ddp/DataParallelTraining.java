package io.flexlink.bench.ddp;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.KernelCompiler;
import io.flexlink.runtime.Backend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Runs the example: every rank in this process, this process's rank of a multi-process job, or the reference. */
final class DataParallelTraining {
    private DataParallelTraining() {
    }

    /** Every rank in this process, one thread each, meeting through a unique id (like {@code ncclCommInitRank}). */
    static List<RankResult> inProcess(TrainOptions o) throws InterruptedException {
        FlexLinkConfig config = o.config();
        try (Backend backend = FlexLink.openBackend(config)) {
            KernelCompiler compiler = backend.name().equals("cuda") ? new KernelCompiler() : null;
            UniqueId id = FlexLink.getUniqueId();
            int n = o.ranks();
            Communicator[] comms = new Communicator[n];
            // every rank's kernels load before any rank's first collective (see RankTrainer)
            CyclicBarrier loaded = new CyclicBarrier(n);
            // and every rank's work is done before any rank frees device memory (cudaFree waits for the device)
            CyclicBarrier done = new CyclicBarrier(n);
            ExecutorService pool = Executors.newFixedThreadPool(n);
            try {
                List<Future<RankResult>> futures = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    int rank = r;
                    int device = o.devices() != null ? o.devices()[r] : r % backend.deviceCount();
                    futures.add(pool.submit(() -> {
                        try (Communicator comm = FlexLink.initRank(backend, config, n, id, rank, device)) {
                            comms[rank] = comm;
                            try (RankTrainer t = new RankTrainer(o, backend, comm, rank, device, compiler,
                                    () -> meet(loaded, "loaded their kernels"), () -> meet(done, "finished"))) {
                                return t.run();
                            }
                        } catch (RuntimeException | Error e) {
                            loaded.reset(); // a rank waiting to meet this one gives up
                            done.reset();
                            abortAll(comms); // the other ranks fail at once instead of waiting for this one
                            throw e;
                        }
                    }));
                }
                List<RankResult> results = new ArrayList<>();
                for (Future<RankResult> f : futures) {
                    results.add(result(f));
                }
                return results;
            } finally {
                pool.shutdown();
            }
        }
    }

    /** Waits until every rank has {@code what} (a rank that failed breaks the barrier for the others). */
    private static void meet(CyclicBarrier barrier, String what) {
        try {
            barrier.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the ranks " + what, e);
        } catch (BrokenBarrierException e) {
            throw new IllegalStateException("another rank failed before every rank " + what, e);
        }
    }

    private static synchronized void abortAll(Communicator[] comms) {
        for (Communicator c : comms) {
            if (c != null) {
                c.abort();
            }
        }
    }

    private static RankResult result(Future<RankResult> f) throws InterruptedException {
        try {
            return f.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("a rank failed", cause);
        }
    }

    /** This process's rank of a job started like torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT). */
    static RankResult fromEnvironment(TrainOptions o, Map<String, String> env) {
        FlexLinkConfig config = o.config();
        try (Backend backend = FlexLink.openBackend(config);
             Communicator comm = FlexLink.initFromEnv(backend, config, env)) {
            KernelCompiler compiler = backend.name().equals("cuda") ? new KernelCompiler() : null;
            try (RankTrainer t = new RankTrainer(o, backend, comm, comm.rank(), comm.device(), compiler)) {
                return t.run();
            } catch (FlexLinkException e) {
                comm.abort();
                throw e;
            }
        }
    }

    /** Plain SGD on one rank holding the whole batch of every step: no communicator, no buckets. */
    static RankResult reference(TrainOptions o) {
        TrainOptions single = o.singleRankOnWholeBatch();
        FlexLinkConfig config = single.config();
        try (Backend backend = FlexLink.openBackend(config)) {
            KernelCompiler compiler = backend.name().equals("cuda") ? new KernelCompiler() : null;
            int device = single.devices() != null ? single.devices()[0] : 0;
            try (RankTrainer t = new RankTrainer(single, backend, null, 0, device, compiler)) {
                return t.run();
            }
        }
    }
}
