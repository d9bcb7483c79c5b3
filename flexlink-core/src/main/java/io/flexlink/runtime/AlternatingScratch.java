package io.flexlink.runtime;

/**
 * Two {@link Scratch} buffers handed out in turn: what one call returned stays untouched through the next
 * call, so that work on another stream may still read it while the caller's stream fills the other one. The
 * caller orders the fill two calls later behind that reader.
 */
public final class AlternatingScratch implements AutoCloseable {
    private final Scratch[] buffers;
    private int next;

    public AlternatingScratch(Backend backend, int device) {
        this.buffers = new Scratch[] {new Scratch(backend, device), new Scratch(backend, device)};
    }

    /** The address of at least {@code bytes} bytes of the buffer whose turn it is; the next call gets the other. */
    public long next(long bytes) {
        Scratch s = buffers[next];
        next ^= 1;
        return s.ensure(bytes);
    }

    /** Frees both buffers; call only when no enqueued work can still use them. Idempotent. */
    @Override
    public void close() {
        buffers[0].close();
        buffers[1].close();
    }
}
