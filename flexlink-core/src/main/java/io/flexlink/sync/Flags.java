package io.flexlink.sync;

/**
 * The states of a handshake word: one word per (producer, slot, consumer), in pinned host memory.
 *
 * <p>The producer waits for {@link #FREE}, fills the slot and writes {@link #FULL}; the consumer waits for
 * {@code FULL}, reads the slot and writes {@code FREE}. Each transition is made by one side only, and only
 * after it saw the other side's state, so no write can overtake another: no counter is ever reset under a
 * reader, and nothing races. The values never depend on how many calls came before, which is what lets a
 * captured CUDA graph replay a call any number of times, interleaved with eager calls, with no host work
 * per replay (counters that count uses would be baked into the graph with the values of capture time).
 *
 * <p>Waits test bits ({@code (word & mask) != 0}, {@code CU_STREAM_WAIT_VALUE_AND}), so that
 * {@link #RELEASED}, which has both bits, releases the waiters of either state at once: that is how an abort
 * moves every blocked stream on (a GPU stream in a wait cannot be cancelled any other way).
 */
public final class Flags {
    /** The producer filled the slot for this consumer. */
    public static final int FULL = 1;
    /** The consumer has read the slot (the state every word starts in). */
    public static final int FREE = 2;
    /** Written by an abort: satisfies every wait. */
    public static final int RELEASED = FULL | FREE;

    private Flags() {
    }
}
