package io.flexlink;

/**
 * A buffer registered with a communicator ({@link Communicator#register}, NCCL's {@code ncclCommRegister}). Where
 * the communicator's primary path is NCCL, NCCL registered the buffer too, so that its own transports may use it
 * without staging copies, as they do for an NCCL program; elsewhere FlexLink keeps the record only (its own
 * paths stage through their buffers either way). Registering is never needed for correctness.
 *
 * <p>{@link #close()} deregisters ({@code ncclCommDeregister}); a second close does nothing. A registration still
 * open when its communicator is closed or aborted is deregistered with it (NCCL frees its registrations with its
 * communicator). Deregister only once the calls that use the buffer are done, as with NCCL.
 */
public interface Registration extends AutoCloseable {
    /** The first byte registered. */
    long address();

    /** How many bytes from {@link #address()}. */
    long bytes();

    /** True when the primary transport (NCCL) registered the buffer too; false where FlexLink keeps the record only. */
    boolean withPrimary();

    /** True once deregistered, by {@link #close()} or with the communicator. */
    boolean isClosed();

    /**
     * Deregisters; idempotent.
     *
     * @throws FlexLinkException the primary transport's error when it refused to deregister (the record is gone)
     */
    @Override
    void close();
}
