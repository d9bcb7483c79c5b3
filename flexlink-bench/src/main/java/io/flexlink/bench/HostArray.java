package io.flexlink.bench;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** A byte array on the host that may exceed 2 GiB: fixed-size chunks, reused across sizes. */
final class HostArray {
    /** Bytes per chunk; a multiple of every element size. */
    static final int CHUNK = 8 << 20;

    private final List<ByteBuffer> chunks = new ArrayList<>();

    /** Makes room for {@code bytes} bytes (contents undefined). */
    void ensure(long bytes) {
        while ((long) chunks.size() * CHUNK < bytes) {
            chunks.add(ByteBuffer.allocate(CHUNK).order(ByteOrder.nativeOrder()));
        }
    }

    int chunkCount(long bytes) {
        return (int) ((bytes + CHUNK - 1) / CHUNK);
    }

    /** A view of chunk {@code k} (independent position and limit), in native order. */
    ByteBuffer chunk(int k) {
        return chunks.get(k).duplicate().order(ByteOrder.nativeOrder());
    }

    /** Copies {@code bytes} bytes from {@code offset} into {@code dst} at its position (which advances). */
    void read(long offset, ByteBuffer dst, int bytes) {
        long at = offset;
        int left = bytes;
        while (left > 0) {
            int k = (int) (at / CHUNK);
            int in = (int) (at % CHUNK);
            int n = Math.min(left, CHUNK - in);
            ByteBuffer src = chunks.get(k).duplicate();
            src.position(in).limit(in + n);
            dst.put(src);
            at += n;
            left -= n;
        }
    }
}
