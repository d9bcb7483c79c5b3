package io.flexlink.launch;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.PinnedMemory;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One communicator's hold on its auxiliary paths' work in a group ({@code flexlink.groupGate}): a counter in pinned
 * host memory that each held call's path streams wait to reach (the first wait of each stream's first flag batch),
 * and that the group's end writes once every call of the group is enqueued. CUDA's enqueue of a stream operation
 * cost the H200's host up to twice as much while earlier ranks' copies streamed through host memory as before they
 * started (docs/benchmarks.md), so that a thread driving eight ranks paid for the transfers it had already set
 * going. The counter only rises, so a wait is satisfied for ever once its value is written: nothing is reset under
 * a stream that has not looked yet. Held under the communicator's call lock; opened also by any aborted
 * communicator's teardown, on any thread and without that lock ({@link #openEvery}), hence synchronized, and a
 * closed gate writes nothing.
 */
final class GroupGate implements AutoCloseable {
    /** Every gate of the process not yet closed, for {@link #openEvery}. */
    private static final Set<GroupGate> LIVE = ConcurrentHashMap.newKeySet();

    private final PinnedMemory word;
    /** The value of the latest held call; written to the word by {@link #open}. */
    private int value;
    private int opened;
    private boolean closed;

    GroupGate(Backend backend) {
        this.word = backend.allocatePinned(64);
        this.word.writeCounter(0, 0);
        LIVE.add(this);
    }

    PinnedMemory word() {
        return word;
    }

    /** The value the next held call waits for. */
    synchronized int hold() {
        return ++value;
    }

    /** Lets every held call go (a host write; idempotent; nothing once closed). */
    synchronized void open() {
        if (!closed && opened != value) {
            opened = value;
            word.writeCounter(0, value);
        }
    }

    /** Opens every gate of the process (from any thread, without any communicator's lock). */
    static void openEvery() {
        for (GroupGate g : LIVE) {
            g.open();
        }
    }

    /**
     * Closed under the lock, so that no open writes into the word from then on; freed outside it: CUDA's free waits
     * for the whole device, where a stream held by another gate may wait for an {@link #openEvery} that took this gate
     * from {@link #LIVE} just before and now waits for its lock.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            LIVE.remove(this);
        }
        word.close();
    }
}
