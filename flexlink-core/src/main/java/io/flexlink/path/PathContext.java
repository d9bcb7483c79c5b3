package io.flexlink.path;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RankExchange;

/** What a {@link PathProvider} gets to set a path up for one rank. */
public final class PathContext {
    private final Backend backend;
    private final FlexLinkConfig config;
    private final RankExchange exchange;
    private final int rank;
    private final int size;
    private final int device;

    public PathContext(Backend backend, FlexLinkConfig config, RankExchange exchange, int rank, int size, int device) {
        this.backend = backend;
        this.config = config;
        this.exchange = exchange;
        this.rank = rank;
        this.size = size;
        this.device = device;
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

    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    public int device() {
        return device;
    }
}
