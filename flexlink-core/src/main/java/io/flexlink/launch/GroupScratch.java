package io.flexlink.launch;

import io.flexlink.runtime.Backend;
import io.flexlink.runtime.ReusedScratch;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@link ReusedScratch} per position in a group: a group's calls are all staged before any of them is
 * launched (NCCL launches a group's part at its end), so two calls of one group must never share one.
 * Positions are made on first use, never in a steady state. Used under the communicator's lock.
 */
final class GroupScratch implements AutoCloseable {
    private final Backend backend;
    private final int device;
    private final List<ReusedScratch> positions = new ArrayList<>();

    GroupScratch(Backend backend, int device) {
        this.backend = backend;
        this.device = device;
    }

    /** The scratch of group position {@code index}. */
    ReusedScratch at(int index) {
        while (positions.size() <= index) {
            positions.add(new ReusedScratch(backend, device));
        }
        return positions.get(index);
    }

    @Override
    public void close() {
        for (ReusedScratch s : positions) {
            s.close();
        }
        positions.clear();
    }
}
