package io.flexlink.sync;

/**
 * One rank's end of the links of a staged path: how an item of a call gets from its producer to its
 * consumers. Items are numbered from 0 in every call, in the order each producer sends them and each
 * consumer receives them (the same on every rank, because every rank makes the same calls with the same
 * splits). The staged algorithms ({@code io.flexlink.path.StagedAlgorithms}) are written once against
 * this interface; the PCIe path runs them over pinned host memory ({@link Staging}), the NVSHMEM path
 * over symmetric GPU memory. Operations are enqueued on the given lane and never wait on the host.
 */
public interface Channel extends AutoCloseable {
    /** Bytes one item carries when every consumer gets the same data. */
    long slotBytes();

    /** Bytes one item carries to each consumer when every consumer gets a piece of its own. */
    long pieceBytes();

    /**
     * True when a one-rank communicator still sends its data through the channel to itself, so that the
     * channel's protocol runs (and is tested) on one device.
     */
    default boolean loopback() {
        return false;
    }

    /** True when a captured call replays correctly (the channel's waits never depend on earlier calls). */
    default boolean capturable() {
        return false;
    }

    /** Before the first operation of a call (a channel may need its device current, or a lock). */
    default void begin() {
    }

    /** After the last operation of a call; also after a call failed half-way. */
    default void end() {
    }

    /**
     * Producer: item {@code item} carries {@code rows} to the consumers in the bit set {@code consumers}
     * (never this rank): the same piece to all when {@code rows} is shared, else row {@code j} to consumer
     * {@code j}.
     */
    void send(Lane lane, int item, Rows rows, long consumers);

    /**
     * Consumer: item {@code item} of every producer in {@code producers} (never this rank), producer
     * {@code p}'s piece copied to {@code dst} row {@code p}; {@code pieces} says whether the producers sent
     * a piece per consumer (this rank's) or one piece for all.
     */
    void receive(Lane lane, int item, long producers, boolean pieces, Rows dst);

    /**
     * Consumer, for a reduction: this rank's piece of item {@code item} from every producer in
     * {@code producers} ({@code pieces} as for {@link #receive}), {@code bytes} each, placed in device rows in
     * ascending producer order, {@link #rowPitch} apart; returns the first row's address. Calls alternate
     * between two sets of rows: the rows of one call are left alone by the next call, so that a reduction on
     * another lane may read them while the next item's rows are filled; the caller orders the call after that
     * behind the reduction, since it fills the same rows again.
     */
    long receiveRows(Lane lane, int item, long producers, boolean pieces, long bytes);

    /**
     * {@link #receiveRows} that keeps the producers' slots taken until {@link #releaseRows}, so that the release
     * can go behind the reduction reading the rows, into the flag batch of the lane's next item: one batch of
     * memory operations fewer per chunk. A channel with nothing to gain releases at once and ignores
     * {@link #releaseRows}.
     */
    default long receiveRowsHeld(Lane lane, int item, long producers, boolean pieces, long bytes) {
        return receiveRows(lane, item, producers, pieces, bytes);
    }

    /** Releases the slots {@link #receiveRowsHeld} kept for item {@code item} of {@code producers}. */
    default void releaseRows(Lane lane, int item, long producers) {
    }

    /** Bytes between the rows {@link #receiveRows} returns for pieces of {@code bytes}. */
    long rowPitch(long bytes);

    /**
     * Sets the abort word every rank sees and releases every wait of every rank on this channel; safe from
     * any thread, idempotent. The data is garbage afterwards.
     */
    void abort();

    /** Releases every wait again (a late write may have lowered a word after an abort). */
    void releaseAll();

    /** The rank that aborted the channel, or -1 while it is healthy; never blocks. */
    int abortedBy();

    /** Which ranks this channel's data waits for, for the watchdog's report; null when nothing waits. */
    String describeStall();

    @Override
    void close();
}
