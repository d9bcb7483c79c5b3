package io.flexlink.runtime;

/** A marker recorded into a stream; completes when the stream reaches it. */
public interface RuntimeEvent extends AutoCloseable {
    /** True when the most recent record has completed (never blocks). */
    boolean isComplete();

    /** Blocks the calling thread until the most recent record has completed. */
    void synchronize();

    /** Milliseconds between {@code start}'s completion and this event's; both must be timing events and complete. */
    float elapsedMillis(RuntimeEvent start);

    @Override
    void close();
}
