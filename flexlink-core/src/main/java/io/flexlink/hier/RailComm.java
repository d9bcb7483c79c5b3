package io.flexlink.hier;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.RuntimeStream;

/**
 * One rank's rail: the collectives among the ranks of one local index, one per node, on the caller's
 * stream. Counts are elements; AllGather and ReduceScatter take a stride (rank {@code r}'s block starts
 * {@code r * stride} elements into the gathered or scattered buffer), so that a hierarchical collective
 * can put every block straight into NCCL's layout. Each element of a reduction is reduced once and
 * copied to the others, so every rank of the rail holds the same bits. Calls come from one owner, which
 * orders them across streams.
 */
interface RailComm extends AutoCloseable {
    int rank();

    int size();

    void allReduce(long send, long recv, long count, DataType type, ReduceOp op, RuntimeStream stream);

    void allGather(long send, long recv, long count, long stride, DataType type, RuntimeStream stream);

    void reduceScatter(long send, long recv, long count, long stride, DataType type, ReduceOp op, RuntimeStream stream);

    void broadcast(long send, long recv, long count, DataType type, int root, RuntimeStream stream);

    void reduce(long send, long recv, long count, DataType type, ReduceOp op, int root, RuntimeStream stream);

    /** The transport's asynchronous error (a lost node, NCCL's error), or null; never blocks. */
    FlexLinkException asyncError();

    /** What this rank's rail work waits for, or null when unknown. */
    String describeStall();

    /**
     * Registers a buffer of the caller's with the rail's transport (NCCL's ncclCommRegister); what undoes it, or null
     * where the transport has no registration (the TCP ring). See {@code PrimaryComm.register}.
     */
    default AutoCloseable register(long address, long bytes) {
        return null;
    }

    /** Stops outstanding work and releases blocked streams; safe from any thread. */
    void abort();

    /** Frees the rail once the streams are done with it. */
    @Override
    void close();

    /** Payload bytes this rank's rail read from the network so far, or -1 where the transport does not say (NCCL). */
    default long bytesReceived() {
        return -1;
    }

    /** The transport, for logs and the perf tool's header: {@code NCCL 2.28.3} or {@code TCP ring}. */
    String describe();
}
