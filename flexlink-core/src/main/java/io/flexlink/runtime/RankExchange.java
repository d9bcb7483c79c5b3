package io.flexlink.runtime;

/** All-gather of small byte arrays among the ranks of a communicator that is being created. */
@FunctionalInterface
public interface RankExchange {
    /** Returns every rank's {@code mine}, indexed by rank; all ranks call it the same number of times. */
    byte[][] allGather(byte[] mine);
}
