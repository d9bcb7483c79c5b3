package io.flexlink.runtime;

/**
 * Scratch that a call fills on its stream and then reads, reused by the next call, which may come on another
 * stream: before filling it, a call waits for the last reader's mark. It waits even when the stream looks the
 * same: one wrapper may stand for different CUDA streams (the per-thread default stream is one handle for
 * every thread, and a destroyed stream's handle may come back), and a wait on an event of the same stream
 * costs one cheap host call. A call being captured into a graph neither waits nor marks: a graph keeps its own
 * order, and an eager mark means nothing inside it. One user at a time (a communicator's call lock).
 */
public final class ReusedScratch implements AutoCloseable {
    private final Scratch scratch;
    private final RuntimeEvent read;
    /** A read was marked: the next fill waits for it. */
    private boolean marked;

    public ReusedScratch(Backend backend, int device) {
        this.scratch = new Scratch(backend, device);
        this.read = backend.createEvent(device, false);
    }

    /** At least {@code bytes} of scratch for {@code stream} to fill, once the last marked reader is done. */
    public long fill(long bytes, RuntimeStream stream, boolean captured) {
        long at = scratch.ensure(Math.max(1, bytes));
        if (marked && !captured) {
            stream.waitEvent(read);
        }
        return at;
    }

    /** After everything that reads what {@link #fill} gave is on {@code stream}: marks the read. */
    public void read(RuntimeStream stream, boolean captured) {
        if (!captured) {
            stream.record(read);
            marked = true;
        }
    }

    @Override
    public void close() {
        scratch.close();
        read.close();
    }
}
