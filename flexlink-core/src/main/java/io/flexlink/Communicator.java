package io.flexlink;

/**
 * One rank of a communicator, with NCCL's collectives in NCCL's argument order and semantics. Every
 * collective enqueues onto {@code stream} and returns without waiting for the device. Counts are in
 * elements. In-place operation follows NCCL: AllReduce, Broadcast and Reduce when {@code send == recv};
 * AllGather when {@code send == recv + rank * count}; ReduceScatter when {@code recv == send + rank * count}
 * (offsets in elements).
 *
 * <p>Bad arguments throw {@link FlexLinkException} with {@link Result#INVALID_ARGUMENT} (or
 * {@link Result#INVALID_USAGE} for a closed or aborted communicator) before anything is enqueued.
 * The {@link Buffer} overloads also check counts against buffer sizes; the address overloads, like NCCL,
 * cannot.
 *
 * <p>A communicator may be used by one thread at a time; calls from two threads at once are serialized.
 */
public interface Communicator extends AutoCloseable {
    /** This rank, in {@code [0, size)}. */
    int rank();

    /** Number of ranks. */
    int size();

    /** The device this rank's buffers and streams live on. */
    int device();

    /** {@code recv[i] = op over ranks of send[i]} for {@code count} elements. */
    void allReduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, Stream stream);

    void allReduce(long send, long recv, long count, DataType type, ReduceOp op, Stream stream);

    /** Every rank's {@code sendCount} elements, in rank order, into {@code recv} ({@code size * sendCount} elements). */
    void allGather(Buffer send, Buffer recv, long sendCount, DataType type, Stream stream);

    void allGather(long send, long recv, long sendCount, DataType type, Stream stream);

    /** Block {@code rank} of the reduction of every rank's {@code send} ({@code size * recvCount} elements) into {@code recv}. */
    void reduceScatter(Buffer send, Buffer recv, long recvCount, DataType type, ReduceOp op, Stream stream);

    void reduceScatter(long send, long recv, long recvCount, DataType type, ReduceOp op, Stream stream);

    /** Root's {@code send} into every rank's {@code recv}; {@code send} is read on the root only. */
    void broadcast(Buffer send, Buffer recv, long count, DataType type, int root, Stream stream);

    void broadcast(long send, long recv, long count, DataType type, int root, Stream stream);

    /** The reduction of every rank's {@code send} into the root's {@code recv}; {@code recv} is written on the root only. */
    void reduce(Buffer send, Buffer recv, long count, DataType type, ReduceOp op, int root, Stream stream);

    void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, Stream stream);

    /**
     * The first error of work already enqueued (like {@code ncclCommGetAsyncError}): SUCCESS while
     * everything is fine; never blocks.
     */
    Result getAsyncError();

    /** Statistics: bytes and time per path, shares per size bucket, tuning history. */
    CommStats stats();

    /**
     * Stops the communicator: every stream blocked in one of its collectives is released, its resources
     * are freed, and later calls fail with INVALID_USAGE. Safe from any thread; idempotent.
     */
    void abort();

    /** Waits for this communicator's own enqueued work, then frees its resources; idempotent. */
    @Override
    void close();
}
