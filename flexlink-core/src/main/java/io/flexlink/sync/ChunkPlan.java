package io.flexlink.sync;

/**
 * How a range of elements is cut into pipelined chunks. Long ranges ramp up and down geometrically
 * ({@code max/8, max/4, max/2, max, ..., max, max/2, max/4, max/8}): the first chunk's device-to-host copy
 * and the last chunk's host-to-device copy cannot overlap anything, so making them small shortens the
 * pipeline's fill and drain without adding many chunks. Shorter ranges are cut into up to four equal
 * chunks so that both copy directions still overlap, but into fewer where four would be shorter than the
 * caller's smallest chunk ({@link EnqueueBudget}: a chunk must be worth its host enqueue). Every rank
 * computes the same plan from the same length.
 */
public final class ChunkPlan {
    /** Smallest chunk worth its per-chunk synchronization. */
    public static final long MIN_CHUNK_BYTES = 256 << 10;
    private static final int RAMP = 3;

    private long[] starts = new long[64];
    private int count;
    private long length = -1;
    private long max;
    private long align;
    private long minChunk;

    /**
     * Plans {@code length} elements in chunks of at most {@code max} elements, boundaries multiples of
     * {@code align} elements; {@code minChunk} elements is the smallest chunk of a short range.
     */
    public ChunkPlan plan(long length, long max, long align, long minChunk) {
        if (length == this.length && max == this.max && align == this.align && minChunk == this.minChunk) {
            return this;
        }
        this.length = length;
        this.max = max;
        this.align = align;
        this.minChunk = minChunk;
        count = 0;
        if (length <= 0) {
            return this;
        }
        if (length >= 4 * max && max >= 8 * align) {
            long at = 0;
            for (int k = RAMP; k > 0; k--) {
                at = add(at, up(max >> k));
            }
            long tail = 0;
            for (int k = 1; k <= RAMP; k++) {
                tail += up(max >> k);
            }
            // the middle ends on an aligned boundary, so that every chunk starts aligned; the last chunk takes
            // what an unaligned length leaves over
            long middleEnd = (length - tail) / align * align;
            while (at < middleEnd) {
                at = add(at, Math.min(max, middleEnd - at));
            }
            for (int k = 1; k < RAMP; k++) {
                at = add(at, Math.min(up(max >> k), length - at));
            }
            at = add(at, length - at);
        } else {
            // as many chunks as the smallest chunk allows, up to four, and enough that none exceeds max
            long k = Math.max(1, Math.min(4, length / Math.max(1, minChunk)));
            k = Math.max(k, (length + max - 1) / max);
            long chunk = Math.min(max, up((length + k - 1) / k));
            for (long at = 0; at < length; ) {
                at = add(at, Math.min(chunk, length - at));
            }
        }
        return this;
    }

    private long up(long v) {
        return Math.max(align, (v + align - 1) / align * align);
    }

    private long add(long at, long len) {
        if (count == starts.length) {
            starts = java.util.Arrays.copyOf(starts, count * 2);
        }
        starts[count++] = at;
        return at + len;
    }

    /** Number of chunks. */
    public int count() {
        return count;
    }

    /** First element of chunk {@code c}; {@code length} for chunks past the end. */
    public long start(long c) {
        return c < count ? starts[(int) c] : Math.max(0, length);
    }

    /** Elements of chunk {@code c}; 0 past the end. */
    public long length(long c) {
        if (c >= count) {
            return 0;
        }
        return (c + 1 < count ? starts[(int) c + 1] : length) - starts[(int) c];
    }
}
