package io.flexlink.ddp;

import static org.junit.jupiter.api.Assertions.fail;

import io.flexlink.Communicator;
import io.flexlink.FlexLink;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** In-process ranks for the bucket tests: communicators, one thread per rank, float buffers. */
final class DdpRig {
    /** Both paths, split at every size, small chunks: every bucket crosses the primary ring and the PCIe path. */
    static final FlexLinkConfig CONFIG = FlexLinkConfig.builder()
            .set(FlexLinkConfig.SHARE, "pcie=0.3").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();
    /** The bound on a rank's work: a hang fails the test instead of the build. */
    static final long RANK_SECONDS = 60;

    private DdpRig() {
    }

    /** What one rank's body returned, or threw. */
    record Outcome<T>(T value, Throwable error) {
    }

    /** A rank's work. */
    interface RankBody<T> {
        T run(int rank) throws Exception;
    }

    static Communicator[] comms(Backend backend, int n) {
        int[] devices = new int[n];
        for (int r = 0; r < n; r++) {
            devices[r] = r;
        }
        return FlexLink.initAll(backend, CONFIG, devices);
    }

    /** Runs {@code body} on one thread per rank and waits (bounded) for every rank. */
    static <T> List<Outcome<T>> onEveryRank(int n, RankBody<T> body) {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                futures.add(pool.submit(() -> body.run(rank)));
            }
            List<Outcome<T>> out = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RANK_SECONDS);
            for (int r = 0; r < n; r++) {
                try {
                    out.add(new Outcome<>(futures.get(r).get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS), null));
                } catch (ExecutionException e) {
                    out.add(new Outcome<>(null, e.getCause()));
                } catch (TimeoutException e) {
                    fail("rank " + r + " did not finish within " + RANK_SECONDS + " s");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    fail("interrupted");
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Like {@link #onEveryRank}, failing on the first rank that threw. */
    static <T> List<T> onEveryRankOk(int n, RankBody<T> body) {
        List<T> values = new ArrayList<>();
        for (Outcome<T> o : onEveryRank(n, body)) {
            if (o.error() != null) {
                throw new AssertionError("a rank failed: " + o.error(), o.error());
            }
            values.add(o.value());
        }
        return values;
    }

    static void upload(Backend backend, long address, float[] values) {
        ByteBuffer b = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.nativeOrder());
        b.asFloatBuffer().put(values);
        backend.upload(address, b);
    }

    static float[] download(Backend backend, long address, int count) {
        ByteBuffer b = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
        backend.download(b, address);
        float[] out = new float[count];
        b.asFloatBuffer().get(out);
        return out;
    }

    /** Gradient buffers of the given element counts: one arena (contiguous, in model order) or one allocation each. */
    static final class Gradients implements AutoCloseable {
        final long[] address;
        private final List<DeviceMemory> memory = new ArrayList<>();

        Gradients(Backend backend, int device, int[] counts, boolean contiguous) {
            address = new long[counts.length];
            if (contiguous) {
                long total = 0;
                for (int c : counts) {
                    total += 4L * c;
                }
                DeviceMemory arena = backend.allocate(device, total);
                memory.add(arena);
                long at = arena.address();
                for (int p = 0; p < counts.length; p++) {
                    address[p] = at;
                    at += 4L * counts[p];
                }
            } else {
                for (int p = 0; p < counts.length; p++) {
                    DeviceMemory m = backend.allocate(device, 4L * counts[p]);
                    memory.add(m);
                    address[p] = m.address();
                }
            }
        }

        @Override
        public void close() {
            for (DeviceMemory m : memory) {
                m.close();
            }
        }
    }
}
