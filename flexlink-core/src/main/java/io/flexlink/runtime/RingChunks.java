package io.flexlink.runtime;

/**
 * The chunks of a ring's segments: {@code count} elements in segments of {@code segLen} (segment
 * {@code seg} starts at {@code seg * segLen}, the last ones short or empty), each cut into chunks of
 * {@code ce} elements. Shared by the host ring and the TCP rails of io.flexlink.hier, which run the same
 * ring schedule over different links.
 */
public final class RingChunks {
    private RingChunks() {
    }

    /** First element of chunk {@code c} of segment {@code seg}. */
    public static long start(int seg, long segLen, long count, long c, long ce) {
        long start = Math.min(count, seg * segLen);
        long end = Math.min(count, start + segLen);
        return Math.min(end, start + c * ce);
    }

    /** Elements of chunk {@code c} of segment {@code seg} (0 past the segment's end). */
    public static long length(int seg, long segLen, long count, long c, long ce) {
        long end = Math.min(count, Math.min(count, seg * segLen) + segLen);
        return Math.min(ce, end - start(seg, segLen, count, c, ce));
    }
}
