package io.flexlink.runtime;

/**
 * Two {@link Scratch} buffers handed out in turn: what one call returned stays untouched through the next
 * call, so that work on another stream may still read it while the caller's stream fills the other one. The
 * caller orders the fill two calls later behind that reader. Where only the filling stream reads them, one
 * buffer serves every call, and no second one is ever allocated.
 */
public final class AlternatingScratch implements AutoCloseable {
    private final Scratch[] buffers;
    private int next;

    /** {@code alternate}: whether another stream reads what a call returned (else one buffer for all calls). */
    public AlternatingScratch(Backend backend, int device, boolean alternate) {
        Scratch first = new Scratch(backend, device);
        this.buffers = new Scratch[] {first, alternate ? new Scratch(backend, device) : first};
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
