package io.flexlink.sync;

/**
 * Where the pieces of one item lie, one row per rank: row {@code j} at {@code base + j * pitch}. A pitch
 * of 0 means one piece, the same for every rank (a broadcast item). Rows end where the range ends:
 * row {@code j} holds {@code clamp(limit - j * pitch, 0, bytes)} bytes, so that the last owners' short
 * or empty segments need no case of their own. A mutable value, reused call after call.
 */
public final class Rows {
    private long base;
    private long pitch;
    private long bytes;
    private long limit;

    /** Rows of {@code bytes} each, never clipped. */
    public Rows set(long base, long pitch, long bytes) {
        return set(base, pitch, bytes, Long.MAX_VALUE);
    }

    /** Rows of at most {@code bytes}, clipped at {@code limit} bytes from {@code base} (see the class comment). */
    public Rows set(long base, long pitch, long bytes, long limit) {
        this.base = base;
        this.pitch = pitch;
        this.bytes = bytes;
        this.limit = limit;
        return this;
    }

    public long pitch() {
        return pitch;
    }

    /** True when every rank gets the same piece. */
    public boolean shared() {
        return pitch == 0;
    }

    public long address(int j) {
        return base + j * pitch;
    }

    /** Bytes of row {@code j}. */
    public long bytes(int j) {
        if (pitch == 0 || limit == Long.MAX_VALUE) {
            return bytes;
        }
        long left = limit - j * pitch;
        return Math.max(0, Math.min(bytes, left));
    }
}
