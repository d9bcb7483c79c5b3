package io.flexlink;

/**
 * An ordered queue of asynchronous work on one device, like a CUDA stream. Collectives enqueue onto the
 * stream they are given and return at once.
 */
public interface Stream extends AutoCloseable {
    /** The device ordinal this stream belongs to. */
    int device();

    /** Blocks until everything enqueued so far has completed; throws if any of it failed. */
    void synchronize();

    /** True when everything enqueued so far has completed. */
    boolean isIdle();

    /** Releases the stream; idempotent. */
    @Override
    void close();
}
