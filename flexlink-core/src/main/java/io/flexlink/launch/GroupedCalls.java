package io.flexlink.launch;

import io.flexlink.plan.CallPlan;
import java.util.ArrayList;
import java.util.List;

/**
 * One communicator's calls of the current group, in call order, until the group's end launches them; an
 * ungrouped call is a group of one and passes through here too. The plans are reused from group to group,
 * so that a steady state of calls allocates nothing. Used under the communicator's lock.
 */
public final class GroupedCalls {
    private final List<CallPlan> plans = new ArrayList<>();
    private final int auxPaths;
    private int size;
    /** The thread's group the calls belong to (one communicator's group calls come from one thread). */
    private Groups owner;

    public GroupedCalls(int auxPaths) {
        this.auxPaths = auxPaths;
    }

    /** A plan for the next call, to be filled in. */
    public CallPlan next() {
        if (size == plans.size()) {
            plans.add(new CallPlan(auxPaths, plans.size()));
        }
        return plans.get(size++);
    }

    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public CallPlan get(int i) {
        return plans.get(i);
    }

    public Groups owner() {
        return owner;
    }

    public void owner(Groups g) {
        owner = g;
    }

    /** Forgets the calls; no reference to a caller's stream outlives the group. */
    public void clear() {
        for (int i = 0; i < size; i++) {
            plans.get(i).clear();
        }
        size = 0;
        owner = null;
    }
}
