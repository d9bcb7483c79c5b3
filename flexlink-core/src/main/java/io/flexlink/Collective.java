package io.flexlink;

import java.util.List;

/**
 * The operations FlexLink splits, with nccl-tests' names and bus-bandwidth factors: the collectives, and
 * NCCL's point-to-point {@link #SEND}/{@link #RECV} (inside a group, any pattern of pairs).
 */
public enum Collective {
    ALL_REDUCE("all_reduce", "AllReduce"),
    ALL_GATHER("all_gather", "AllGather"),
    REDUCE_SCATTER("reduce_scatter", "ReduceScatter"),
    BROADCAST("broadcast", "Broadcast"),
    REDUCE("reduce", "Reduce"),
    ALL_TO_ALL("alltoall", "AlltoAll"),
    GATHER("gather", "Gather"),
    SCATTER("scatter", "Scatter"),
    SEND("send", "Send"),
    RECV("recv", "Recv");

    private static final List<Collective> COLLECTIVES = List.of(ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST,
            REDUCE, ALL_TO_ALL, GATHER, SCATTER);

    private final String testName;
    private final String displayName;

    Collective(String testName, String displayName) {
        this.testName = testName;
        this.displayName = displayName;
    }

    /** The collectives, without the point-to-point operations. */
    public static List<Collective> collectives() {
        return COLLECTIVES;
    }

    /** nccl-tests' binary name without {@code _perf}: {@code all_reduce}, ... */
    public String testName() {
        return testName;
    }

    public String displayName() {
        return displayName;
    }

    /** True for the collectives that take a reduction operation. */
    public boolean reduces() {
        return this == ALL_REDUCE || this == REDUCE_SCATTER || this == REDUCE;
    }

    /** True for Send and Recv. */
    public boolean pointToPoint() {
        return this == SEND || this == RECV;
    }

    /** True when {@code root} names a rank (Broadcast, Reduce, Gather, Scatter) or, for Send/Recv, the peer. */
    public boolean rooted() {
        return this == BROADCAST || this == REDUCE || this == GATHER || this == SCATTER || pointToPoint();
    }

    /**
     * True when the per-rank count is one block of a buffer of {@code ranks} blocks on some rank (the split of
     * such a call cuts every block at the same offsets): AllGather's output, ReduceScatter's input, both
     * buffers of AlltoAll, Gather's output and Scatter's input.
     */
    public boolean blocked() {
        return this == ALL_GATHER || this == REDUCE_SCATTER || this == ALL_TO_ALL || this == GATHER || this == SCATTER;
    }

    /**
     * nccl-tests' factor from algorithm bandwidth to bus bandwidth for {@code ranks} ranks:
     * 2(n-1)/n for AllReduce, (n-1)/n for AllGather, ReduceScatter, AlltoAll, Gather and Scatter, 1 for
     * Broadcast, Reduce and Send/Recv.
     */
    public double busFactor(int ranks) {
        switch (this) {
            case ALL_REDUCE: return ranks == 0 ? 0 : 2.0 * (ranks - 1) / ranks;
            case ALL_GATHER:
            case REDUCE_SCATTER:
            case ALL_TO_ALL:
            case GATHER:
            case SCATTER: return ranks == 0 ? 0 : (double) (ranks - 1) / ranks;
            default: return 1.0;
        }
    }

    /** Parses {@code all_reduce}, {@code allreduce} or {@code ALL_REDUCE}. */
    public static Collective parse(String name) {
        if (name == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "collective: null");
        }
        String n = name.replace("_perf", "").replace("_", "").toLowerCase(java.util.Locale.ROOT);
        for (Collective c : values()) {
            if (c.testName.replace("_", "").equals(n)) {
                return c;
            }
        }
        throw new FlexLinkException(Result.INVALID_ARGUMENT, "collective: unknown '" + name + "'");
    }
}
