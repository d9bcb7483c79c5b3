package io.flexlink.runtime;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The reference count of memory that several ranks of one process open by name: starts at one, never
 * goes below zero, and exactly one {@link #release()} reports the last reference.
 */
public final class RefCount {
    private final AtomicInteger references = new AtomicInteger(1);

    /** Takes one more reference; false when the last one was already released. */
    public boolean retain() {
        while (true) {
            int r = references.get();
            if (r <= 0) {
                return false;
            }
            if (references.compareAndSet(r, r + 1)) {
                return true;
            }
        }
    }

    /** Drops one reference; true for the call that dropped the last one (free then), false otherwise. */
    public boolean release() {
        while (true) {
            int r = references.get();
            if (r <= 0) {
                return false;
            }
            if (references.compareAndSet(r, r - 1)) {
                return r == 1;
            }
        }
    }
}
