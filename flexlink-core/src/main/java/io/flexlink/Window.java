package io.flexlink;

/**
 * A buffer registered as a window of a communicator ({@link Communicator#registerWindow}, NCCL's
 * {@code ncclCommWindowRegister}): the target of the peers' {@link Communicator#putSignal one-sided puts}. NCCL holds
 * it (windows exist only where NCCL is the communicator's primary path); FlexLink keeps the handle so that a
 * window of another communicator, or one closed already, is refused before NCCL sees it.
 *
 * <p>{@link #close()} deregisters ({@code ncclCommWindowDeregister}, collective over the ranks like the
 * registration); a second close does nothing. A window still open when its communicator is closed or aborted is
 * closed with it, before the communicator is gone (NCCL frees its windows with its communicator).
 */
public interface Window extends AutoCloseable {
    /** The first byte registered. */
    long address();

    /** How many bytes from {@link #address()}. */
    long bytes();

    /** The flags it was registered with (NCCL's {@code NCCL_WIN_*}). */
    int flags();

    /**
     * The local buffer behind the window, as {@code ncclWinGetUserPtr} answers it (NCCL's answer where the library
     * has the function, NCCL 2.29 and later; the registered address otherwise, which is what NCCL answers).
     *
     * @throws FlexLinkException INVALID_USAGE once closed, or NCCL's error
     */
    long userAddress();

    /** True once deregistered, by {@link #close()} or with the communicator. */
    boolean isClosed();

    /**
     * Deregisters; idempotent.
     *
     * @throws FlexLinkException NCCL's error when it refused to deregister (the handle is closed either way)
     */
    @Override
    void close();
}
