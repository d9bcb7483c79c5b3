package io.flexlink.runtime;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;

/**
 * One rank's primary collectives. Addresses are device addresses; counts are elements. AllGather and
 * ReduceScatter take a stride so that a slice of each rank's block can be moved in place: rank
 * {@code r}'s block starts {@code r * stride} elements into the gathered (or scattered) buffer.
 */
public interface PrimaryComm extends AutoCloseable {
    int rank();

    int size();

    void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream);

    /** Gathers {@code count} elements of every rank into {@code recv + r * stride}. */
    void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream);

    /** Reduces block {@code r} ({@code count} elements at {@code send + r * stride}) of every rank into rank r's {@code recv}. */
    void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op, RuntimeStream stream);

    void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream);

    void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream);

    /** Block {@code j} of {@code send} ({@code send + j * stride}) to rank {@code j}'s {@code recv + rank * stride}. */
    void allToAll(long send, long recv, long count, long stride, DataType type, RuntimeStream stream);

    /** Every rank's {@code count} elements into the root's {@code recv + r * stride}. */
    void gather(long send, long recv, long count, long stride, DataType type, int root, RuntimeStream stream);

    /** Block {@code r} of the root's {@code send} ({@code send + r * stride}) into rank {@code r}'s {@code recv}. */
    void scatter(long send, long recv, long count, long stride, DataType type, int root, RuntimeStream stream);

    /** This rank's sends and receives of one group, all together (NCCL's grouped send/recv). */
    void exchange(PeerOps ops, RuntimeStream stream);

    /**
     * Registers {@code bytes} bytes at {@code address} with the transport ({@code ncclCommRegister}), so that
     * its collectives on that buffer may skip staging; returns what deregisters it, or null when the transport
     * has no registration (the host ring, whose ranks share memory anyway). The closeable must do nothing once
     * this communicator was closed or aborted (NCCL frees its registrations with its communicator).
     */
    default AutoCloseable register(long address, long bytes) {
        return null;
    }

    /** The transport's windows and one-sided calls (NCCL's), or null where it has none (the host ring). */
    default OneSided oneSided() {
        return null;
    }

    /** Stops all outstanding work and releases blocked streams; safe from any thread. */
    void abort();

    /**
     * The transport's own asynchronous error (NCCL's {@code ncclCommGetAsyncError}; on the host ring, a
     * peer's abort), or null; never blocks. Not called after {@link #abort()}.
     */
    default io.flexlink.FlexLinkException asyncError() {
        return null;
    }

    /** What this rank's primary work is waiting for, for the watchdog's report; or null when unknown. */
    default String describeStall() {
        return null;
    }

    @Override
    void close();
}
