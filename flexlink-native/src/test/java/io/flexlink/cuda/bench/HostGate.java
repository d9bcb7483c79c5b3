package io.flexlink.cuda.bench;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeStream;

/**
 * A word of pinned host memory that holds streams until the host has enqueued all of their work, so that the
 * work starts together on every stream and a timing leaves the host's enqueue out. Each hold waits for the
 * next value of the word, which only rises: a hold never catches the streams of an earlier one.
 */
final class HostGate implements AutoCloseable {
    private final PinnedMemory word;
    private int turn;

    HostGate(Backend backend) {
        this.word = backend.allocatePinned(64);
    }

    /**
     * Holds {@code streams} while {@code enqueue} runs, then lets them go, also when it throws: a stream left on
     * the gate would hold every later free of the memory it uses.
     */
    void hold(Runnable enqueue, RuntimeStream... streams) {
        int k = ++turn;
        try {
            for (RuntimeStream s : streams) {
                s.waitValue32(word, 0, k);
            }
            enqueue.run();
        } finally {
            word.writeCounter(0, k);
        }
    }

    @Override
    public void close() {
        word.close();
    }
}
