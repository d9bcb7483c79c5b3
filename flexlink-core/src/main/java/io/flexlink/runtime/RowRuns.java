package io.flexlink.runtime;

import java.util.Arrays;

/**
 * Several independent copies of rows ({@link RuntimeStream#copyRows}, {@link RuntimeStream#copyRowsFromHost}) to
 * enqueue as one operation where the backend can ({@link RuntimeStream#copyRowRuns}): a staged item's pieces for
 * the consumers before and after its producer are two runs, and so are the rows a consumer reads from the
 * producers on either side of it. The runs write disjoint memory and may run in any order. Reused call after
 * call: it grows only for more runs than ever before, so a steady state allocates nothing.
 */
public final class RowRuns {
    private long[] dst = new long[4];
    private long[] dstPitch = new long[4];
    private long[] src = new long[4];
    private long[] srcPitch = new long[4];
    private long[] width = new long[4];
    private long[] rows = new long[4];
    /** Per run: the pinned memory its source lies in ({@code src} is then an offset into it), or null. */
    private PinnedMemory[] host = new PinnedMemory[4];
    private int size;

    /** Adds {@link RuntimeStream#copyRows}'s copy (none of no bytes). */
    public void add(long dst, long dstPitch, long src, long srcPitch, long width, long rows) {
        put(dst, dstPitch, null, src, srcPitch, width, rows);
    }

    /** Adds {@link RuntimeStream#copyRowsFromHost}'s copy. */
    public void addFromHost(long dst, long dstPitch, PinnedMemory memory, long offset, long srcPitch, long width,
                            long rows) {
        put(dst, dstPitch, memory, offset, srcPitch, width, rows);
    }

    private void put(long d, long dp, PinnedMemory m, long s, long sp, long w, long r) {
        if (w <= 0 || r <= 0) {
            return; // nothing to copy (and CUDA refuses an empty extent)
        }
        if (size == dst.length) {
            int n = 2 * size;
            dst = Arrays.copyOf(dst, n);
            dstPitch = Arrays.copyOf(dstPitch, n);
            src = Arrays.copyOf(src, n);
            srcPitch = Arrays.copyOf(srcPitch, n);
            width = Arrays.copyOf(width, n);
            rows = Arrays.copyOf(rows, n);
            host = Arrays.copyOf(host, n);
        }
        dst[size] = d;
        dstPitch[size] = dp;
        host[size] = m;
        src[size] = s;
        srcPitch[size] = sp;
        width[size] = w;
        rows[size] = r;
        size++;
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public void clear() {
        Arrays.fill(host, 0, size, null);
        size = 0;
    }

    public long dst(int i) {
        return dst[i];
    }

    public long dstPitch(int i) {
        return dstPitch[i];
    }

    /** Run {@code i}'s source as the device sees it: a pinned source at its mapped address. */
    public long deviceSrc(int i) {
        return host[i] == null ? src[i] : host[i].deviceAddress() + src[i];
    }

    public long srcPitch(int i) {
        return srcPitch[i];
    }

    public long width(int i) {
        return width[i];
    }

    public long rows(int i) {
        return rows[i];
    }

    /** Enqueues every run as its own operation, in order: what a backend without batched copies does. */
    public void enqueueEach(RuntimeStream stream) {
        for (int i = 0; i < size; i++) {
            if (host[i] == null) {
                stream.copyRows(dst[i], dstPitch[i], src[i], srcPitch[i], width[i], rows[i]);
            } else {
                stream.copyRowsFromHost(dst[i], dstPitch[i], host[i], src[i], srcPitch[i], width[i], rows[i]);
            }
        }
    }
}
