package io.flexlink.comm;

import io.flexlink.path.CollectiveCall;
import java.util.ArrayList;
import java.util.List;

/**
 * One communicator's calls recorded inside a group, in call order, until the group's end launches them.
 * The records are reused from group to group, so that a steady state of grouped calls allocates nothing.
 * Used under the communicator's lock.
 */
final class GroupedCalls {
    private final List<CollectiveCall> records = new ArrayList<>();
    private int size;
    /** The thread's group the calls belong to (one communicator's group calls come from one thread). */
    Groups owner;
    /** The plan of a group's one split call, kept from the group end's first phase to its third. */
    boolean split;
    int slot = -1;
    final long[] lengths;

    /** @param paths primary plus auxiliary paths, the length of a plan */
    GroupedCalls(int paths) {
        this.lengths = new long[paths];
    }

    /** A record for the next call, to be filled in. */
    CollectiveCall next() {
        if (size == records.size()) {
            records.add(new CollectiveCall());
        }
        return records.get(size++);
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    CollectiveCall get(int i) {
        return records.get(i);
    }

    void clear() {
        for (int i = 0; i < size; i++) {
            records.get(i).stream = null; // no reference to a caller's stream outlives the group
        }
        size = 0;
        owner = null;
    }
}
