package io.flexlink.comm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The open handles of one communicator that its close must release (registrations, windows): added unless the
 * communicator has closed, removed by their own close, and at the communicator's close handed back newest first
 * while later additions are refused. Its monitor guards the list only: what releasing a handle does runs
 * outside it, since it may take the communicator's call lock.
 */
final class OpenHandles<H> {
    private final List<H> open = new ArrayList<>();
    private boolean closed;

    /** Adds {@code h}; false once the communicator has closed (the caller then undoes {@code h} itself). */
    synchronized boolean add(H h) {
        if (closed) {
            return false;
        }
        open.add(h);
        return true;
    }

    synchronized List<H> open() {
        return List.copyOf(open);
    }

    synchronized void remove(H h) {
        open.remove(h);
    }

    /** Refuses later additions and hands back what is open, newest first, which is then no longer held here. */
    synchronized List<H> closeAll() {
        closed = true;
        List<H> left = new ArrayList<>(open);
        open.clear();
        Collections.reverse(left);
        return left;
    }
}
