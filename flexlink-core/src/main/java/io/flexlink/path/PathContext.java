package io.flexlink.path;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.MemoryPlacement;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RankDevices;
import io.flexlink.runtime.RankExchange;
import io.flexlink.sync.EnqueueBudget;
import java.util.function.Consumer;

/** What a {@link PathProvider} gets to set a path up for one rank. */
public final class PathContext {
    /** Makes host memory every rank of the communicator maps; what it makes is freed if creation fails. */
    public interface SharedMemory {
        /**
         * Rank 0 creates {@code bytes} of zeroed pinned memory for {@code purpose} (placed by
         * {@code placement} where the backend can, null for anywhere) and runs {@code initialize} on it before
         * any other rank can see it; every rank then maps it. Collective: every rank calls it together.
         */
        PinnedMemory create(String purpose, long bytes, MemoryPlacement placement, Consumer<PinnedMemory> initialize);
    }

    private final Backend backend;
    private final FlexLinkConfig config;
    private final RankExchange exchange;
    private final SharedMemory shared;
    private final int rank;
    private final RankDevices devices;
    private final EnqueueBudget budget;

    /** {@code budget}: how many of the communicator's ranks one thread enqueues (the same on every rank). */
    public PathContext(Backend backend, FlexLinkConfig config, RankExchange exchange, SharedMemory shared, int rank,
                       RankDevices devices, EnqueueBudget budget) {
        this.backend = backend;
        this.config = config;
        this.exchange = exchange;
        this.shared = shared;
        this.rank = rank;
        this.devices = devices;
        this.budget = budget;
    }

    /** How many of the communicator's ranks one thread enqueues, which sizes a staged path's chunks. */
    public EnqueueBudget budget() {
        return budget;
    }

    public Backend backend() {
        return backend;
    }

    public FlexLinkConfig config() {
        return config;
    }

    /** All-gather among the communicator's ranks (setup only, not on the hot path). */
    public RankExchange exchange() {
        return exchange;
    }

    /** Shared host memory for the path's staging. */
    public SharedMemory shared() {
        return shared;
    }

    public int rank() {
        return rank;
    }

    public int size() {
        return devices.size();
    }

    /** This rank's device. */
    public int device() {
        return devices.ordinal(rank);
    }

    /** Every rank's device: its ordinal in its own process, and which ranks share one. */
    public RankDevices devices() {
        return devices;
    }

    /** How many of the communicator's ranks use this rank's device, this one included (by device key). */
    public int ranksOnDevice() {
        return devices.sharing(rank);
    }
}
