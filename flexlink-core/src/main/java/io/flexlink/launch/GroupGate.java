package io.flexlink.launch;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;

/**
 * One communicator's hold on its auxiliary paths' work in a group ({@code flexlink.groupGate}): a counter in pinned
 * host memory that each held call's path streams wait to reach (the first wait of each stream's first flag batch),
 * and that the group's end writes once every call of the group is enqueued. CUDA's enqueue of a stream operation
 * cost the H200's host up to twice as much while earlier ranks' copies streamed through host memory as before they
 * started (docs/benchmarks.md), so that a thread driving eight ranks paid for the transfers it had already set
 * going. The counter only rises, so a wait is satisfied for ever once its value is written: nothing is reset under
 * a stream that has not looked yet. Held under the communicator's call lock; opened also by a teardown from another
 * thread (before it waits for the streams), hence synchronized.
 */
final class GroupGate implements AutoCloseable {
    private final PinnedMemory word;
    /** The value of the latest held call; written to the word by {@link #open}. */
    private int value;
    private int opened;

    GroupGate(Backend backend) {
        this.word = backend.allocatePinned(64);
        this.word.writeCounter(0, 0);
    }

    PinnedMemory word() {
        return word;
    }

    /** The value the next held call waits for. */
    synchronized int hold() {
        return ++value;
    }

    /** Lets every held call go (a host write; idempotent). */
    synchronized void open() {
        if (opened != value) {
            opened = value;
            word.writeCounter(0, value);
        }
    }

    @Override
    public void close() {
        word.close();
    }
}
