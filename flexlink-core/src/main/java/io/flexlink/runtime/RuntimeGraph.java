package io.flexlink.runtime;

/**
 * Work captured from a stream ({@link RuntimeStream#beginCapture}, {@link RuntimeStream#endCapture}) and
 * instantiated, to be launched any number of times: a CUDA graph. FlexLink's collectives captured into one
 * replay correctly each time with no host work per replay (the shares are those of capture time). Close it
 * before the communicators it captured: a replay after they are gone has no memory to work on.
 */
public interface RuntimeGraph extends AutoCloseable {
    /** Enqueues one replay on {@code stream}. */
    void launch(RuntimeStream stream);

    /** Frees the graph; idempotent. */
    @Override
    void close();
}
