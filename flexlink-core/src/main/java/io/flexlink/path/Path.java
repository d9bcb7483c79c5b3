package io.flexlink.path;

import io.flexlink.runtime.PeerOps;
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

    /**
     * True when this path's work can be captured into a CUDA graph and replayed any number of times with no
     * host work per replay (its synchronization never depends on how many calls came before).
     */
    default boolean capturable() {
        return false;
    }

    /** Enqueues this path's part of {@code call}: elements {@code [offset, offset + length)}. */
    void enqueue(CollectiveCall call, long offset, long length);

    /**
     * Enqueues this path's part of a group's sends and receives ({@code ops}: the ranges this path carries),
     * all together, so that any pattern of pairs runs without deadlock; {@code stream} is the callers' stream
     * (the primary path works on it).
     */
    void exchange(PeerOps ops, RuntimeStream stream);

    /**
     * Releases every stream of this path blocked on a peer, and tells the peers (they see the path's
     * {@link #asyncError()}); safe from any thread, idempotent. Frees nothing.
     */
    void abort();

    /**
     * An error this path learned of without a stream failing, typically a peer that aborted (REMOTE_ERROR
     * naming the rank), or null; never blocks, safe from any thread.
     */
    default io.flexlink.FlexLinkException asyncError() {
        return null;
    }

    /** What this path's streams are waiting for (counters behind, ranks), for the watchdog's report; or null. */
    default String describeStall() {
        return null;
    }

    /** Releases the path's resources; idempotent. */
    @Override
    void close();
}
