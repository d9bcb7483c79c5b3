package io.flexlink.balance;

import io.flexlink.Collective;
import io.flexlink.config.ByteSizes;

/**
 * Size buckets of the balancer: powers of two. A call of {@code bytes} bytes per rank falls in bucket
 * {@code ceil(log2(bytes))}; a channel is one (collective, bucket) pair.
 */
public final class SizeBuckets {
    /** Buckets 0..63. */
    public static final int BUCKETS = 64;

    private SizeBuckets() {
    }

    public static int bucket(long bytes) {
        return bytes <= 1 ? 0 : 64 - Long.numberOfLeadingZeros(bytes - 1);
    }

    public static int channel(Collective c, long bytes) {
        return c.ordinal() * BUCKETS + bucket(bytes);
    }

    public static int channels() {
        return Collective.values().length * BUCKETS;
    }

    public static Collective collective(int channel) {
        return Collective.values()[channel / BUCKETS];
    }

    public static int bucketOf(int channel) {
        return channel % BUCKETS;
    }

    /** {@code all_reduce/64M}. */
    public static String label(int channel) {
        return collective(channel).testName() + "/" + ByteSizes.format(1L << bucketOf(channel));
    }
}
