package io.flexlink.runtime;

/**
 * Scratch that a call fills on its stream and then reads, reused by the next call, which may come on another
 * stream: before filling it, a call on another stream than the last reader's waits for that reader's mark; on
 * the same stream, stream order already keeps the two apart, and nothing is enqueued. A call being captured
 * into a graph neither waits nor marks: a graph keeps its own order, and an eager mark means nothing inside
 * it. One user at a time (a communicator's call lock, or its enqueue thread).
 */
public final class ReusedScratch implements AutoCloseable {
    private final Scratch scratch;
    private final RuntimeEvent read;
    /** The stream of the last read marked, or null before the first. */
    private RuntimeStream lastReader;

    public ReusedScratch(Backend backend, int device) {
        this.scratch = new Scratch(backend, device);
        this.read = backend.createEvent(device, false);
    }

    /** At least {@code bytes} of scratch for {@code stream} to fill, once the last reader on another stream is done. */
    public long fill(long bytes, RuntimeStream stream, boolean captured) {
        long at = scratch.ensure(Math.max(1, bytes));
        if (lastReader != null && lastReader != stream && !captured) {
            stream.waitEvent(read);
        }
        return at;
    }

    /** After everything that reads what {@link #fill} gave is on {@code stream}: marks the read. */
    public void read(RuntimeStream stream, boolean captured) {
        if (!captured) {
            stream.record(read);
            lastReader = stream;
        }
    }

    @Override
    public void close() {
        lastReader = null;
        scratch.close();
        read.close();
    }
}
