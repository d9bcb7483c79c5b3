package io.flexlink.bench.ddp;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.KernelCompiler;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.NativeMemory;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs {@link DataParallelTrainingGpuTest}'s two-rank case (two ranks sharing GPU 0, the PCIe path carrying every
 * bucket) again and again in one JVM, to catch a rare hang where it happens. Should an iteration run past
 * {@code limitSeconds}, the words of every staging area the backend shares between the ranks (before and after the
 * stacks, so that a word still moving shows), the streams that still have work and every thread's stack are printed, and the JVM halts with status 3. The communicators' timeout is {@code timeout}, longer than the
 * limit, so that the words are read before any abort writes over them. Usage:
 * {@code TrainingLoop [iterations] [timeout] [limitSeconds]}; a GPU bench, run by no test.
 */
public final class TrainingLoop {
    private static volatile Backend current;

    private TrainingLoop() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        String timeout = args.length > 1 ? args[1] : "120s";
        long limitNanos = (args.length > 2 ? Long.parseLong(args[2]) : 20) * 1_000_000_000L;
        TrainOptions o = DataParallelTrainingGpuTest.onGpu0(2, "auto", "none", true)
                .with(b -> b.overrides.put(FlexLinkConfig.TIMEOUT, timeout));
        long[] started = {System.nanoTime()};
        Thread guard = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
                if (System.nanoTime() - started[0] > limitNanos) {
                    System.out.println("iteration past its limit");
                    dumpAreas(current);
                    Backend b = current;
                    System.out.println("streams with work: " + (b == null ? "?" : b.busyStreams(0).stream()
                            .map(io.flexlink.runtime.RuntimeStream::label).toList()));
                    for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
                        System.out.println("\"" + t.getKey().getName() + "\" " + t.getKey().getState());
                        for (StackTraceElement e : t.getValue()) {
                            System.out.println("    at " + e);
                        }
                    }
                    dumpAreas(current);
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
            }
        }, "training-loop-guard");
        guard.setDaemon(true);
        guard.start();
        for (int i = 1; i <= iterations; i++) {
            started[0] = System.nanoTime();
            List<RankResult> all = twoRanks(o);
            float[] curve = all.get(0).losses();
            boolean same = all.get(0).weights().equals(all.get(1).weights());
            System.out.printf("iteration %d: %.1f s, loss %.4f -> %.4f, ranks identical %s%n", i,
                    (System.nanoTime() - started[0]) / 1e9, curve[0], curve[curve.length - 1], same);
            if (!same) {
                System.exit(2);
            }
        }
        guard.interrupt();
    }

    /**
     * {@link DataParallelTraining#inProcess} for two ranks, keeping the backend where the guard can read it (a near-copy
     * of it, without its abort of the peers on a failure: the example's code is left as the GPU suite ran it).
     */
    private static List<RankResult> twoRanks(TrainOptions o) throws Exception {
        FlexLinkConfig config = o.config();
        try (Backend backend = FlexLink.openBackend(config)) {
            current = backend;
            KernelCompiler compiler = new KernelCompiler();
            UniqueId id = FlexLink.getUniqueId();
            CyclicBarrier loaded = new CyclicBarrier(2);
            CyclicBarrier done = new CyclicBarrier(2);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                List<Future<RankResult>> futures = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    int rank = r;
                    futures.add(pool.submit(() -> {
                        try (Communicator comm = FlexLink.initRank(backend, config, 2, id, rank, 0);
                             RankTrainer t = new RankTrainer(o, backend, comm, rank, 0, compiler,
                                     () -> await(loaded), () -> await(done))) {
                            return t.run();
                        }
                    }));
                }
                List<RankResult> results = new ArrayList<>();
                for (Future<RankResult> f : futures) {
                    results.add(f.get());
                }
                return results;
            } finally {
                pool.shutdown();
            }
        }
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Every shared pinned area of the CUDA backend (its allocator's registry, read by reflection): the non-zero words
     * of its first 4 KiB, where a two-rank area of four slots keeps its handshake words (producer p, slot s,
     * consumer j at ((p * 4 + s) * 2 + j) * 64) and its abort word (at 1024).
     */
    private static void dumpAreas(Backend backend) {
        try {
            Field host = backend.getClass().getDeclaredField("host");
            host.setAccessible(true);
            Object allocator = host.get(backend);
            Field shared = allocator.getClass().getDeclaredField("shared");
            shared.setAccessible(true);
            Map<?, ?> areas = (Map<?, ?>) shared.get(allocator);
            for (Map.Entry<?, ?> e : areas.entrySet()) {
                io.flexlink.runtime.PinnedMemory m = (io.flexlink.runtime.PinnedMemory) e.getValue();
                StringBuilder sb = new StringBuilder("area " + e.getKey() + " (" + m.byteSize() + " B) at 0x"
                        + Long.toHexString(m.hostAddress()) + ":");
                for (long at = 0; at < Math.min(4096, m.byteSize()); at += 4) {
                    int v = NativeMemory.UNSAFE.getIntVolatile(null, m.hostAddress() + at);
                    if (v != 0) {
                        sb.append(' ').append(at).append('=').append(v);
                    }
                }
                System.out.println(sb);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.out.println("areas not readable: " + e);
        }
    }
}
