package io.flexlink.path;

import io.flexlink.runtime.RuntimeStream;

/**
 * One way of moving bytes between the ranks of a communicator, like an NCCL transport. The engine gives
 * each path a contiguous range {@code [offset, offset + length)} of the call's per-rank count; the path
 * enqueues its work for that range and returns at once.
 */
public interface Path extends AutoCloseable {
    /** {@code primary}, {@code pcie} or {@code nvshmem}. */
    String name();

    /**
     * The streams this path works on, which the engine forks from and joins back into the caller's
     * stream; empty when the path works on the caller's stream itself.
     */
    RuntimeStream[] streams();

    /** Enqueues this path's part of {@code call}: elements {@code [offset, offset + length)}. */
    void enqueue(CollectiveCall call, long offset, long length);

    /** Releases every stream of this path blocked on a peer; safe from any thread. */
    void abort();

    /** Releases the path's resources; idempotent. */
    @Override
    void close();
}
