package io.flexlink.path;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.GroupCalls;
import io.flexlink.testing.ProbeCall;
import java.util.Arrays;
import java.util.Locale;

/**
 * The host time of one group's enqueue ({@code groupStart}, a call per rank, {@code groupEnd}) on the host backend,
 * for the same calls {@link StreamOpCount} counts: the Java work of the engine between stream operations, which the
 * CUDA backend's enqueue pays too, apart from CUDA's own cost per operation. The streams are synchronized between
 * calls; only the enqueue is timed. Prints the median and the lower quartile per rank. Usage:
 * {@code HostEnqueueTime collective bytesPerRank ranks chunk calls} (after 300 calls of warm-up).
 */
public final class HostEnqueueTime {
    private static final int WARM_UP = 300;

    private HostEnqueueTime() {
    }

    public static void main(String[] args) {
        ProbeCall p = ProbeCall.parse(args);
        int calls = Integer.parseInt(args[4]);
        FlexLinkConfig config = p.config().build();
        try (HostBackend host = new HostBackend(config)) {
            GroupCalls group = p.group(host, p.communicators(host, config));
            for (int i = 0; i < WARM_UP; i++) {
                group.enqueue();
                group.synchronize();
            }
            long[] nanos = new long[calls];
            for (int i = 0; i < calls; i++) {
                long start = System.nanoTime();
                group.enqueue();
                nanos[i] = System.nanoTime() - start;
                group.synchronize();
            }
            Arrays.sort(nanos);
            System.out.printf(Locale.ROOT, "%s %d B per rank, %d ranks, chunk %s: enqueue %.1f us per rank (median of %d),"
                    + " lower quartile %.1f%n", p.collective(), p.bytes(), p.ranks(), p.chunk(),
                    nanos[calls / 2] / 1e3 / p.ranks(), calls, nanos[calls / 4] / 1e3 / p.ranks());
            group.close();
        }
    }
}
