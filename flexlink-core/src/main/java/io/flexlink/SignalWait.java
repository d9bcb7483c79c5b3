package io.flexlink;

/**
 * One signal that {@link Communicator#waitSignal} waits for (NCCL's {@code ncclWaitSignalDesc_t}): {@code count}
 * more signal operations ({@code opCnt}) of {@code peer} on this rank's signal {@code signal}. The count is of the
 * operations since the previous waits for that signal, as NCCL's (nccl-tests waits for 1 in every iteration).
 */
public record SignalWait(int peer, int signal, int count) {
}
