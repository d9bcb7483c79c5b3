package io.flexlink.balance;

/**
 * Where the ranks of a communicator exchange their measurements, so that every rank takes the same
 * balancing decision. Entry {@code d} of a channel is published by every rank at that channel's
 * {@code d}-th decision point and read by every rank at the next one.
 */
public interface BalanceBoard {
    /**
     * Publishes this rank's measurement for decision {@code decision} of {@code channel}: per-path times
     * (seconds, NaN for a path that carried nothing) measured under share version {@code version}, or
     * {@code times == null} when this rank has no complete measurement of that version.
     */
    void publish(int channel, long decision, int version, float[] times);

    /**
     * Reads every rank's entry {@code decision} of {@code channel}, waiting (bounded) for ranks that have
     * not published it yet, and writes the per-path maximum over ranks into {@code maxTimes}.
     *
     * @return true when every rank published a measurement of share version {@code version}
     */
    boolean collect(int channel, long decision, int version, float[] maxTimes);
}
