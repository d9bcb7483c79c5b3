package io.flexlink;

/** The collectives FlexLink splits, with nccl-tests' names and bus-bandwidth factors. */
public enum Collective {
    ALL_REDUCE("all_reduce", "AllReduce"),
    ALL_GATHER("all_gather", "AllGather"),
    REDUCE_SCATTER("reduce_scatter", "ReduceScatter"),
    BROADCAST("broadcast", "Broadcast"),
    REDUCE("reduce", "Reduce");

    private final String testName;
    private final String displayName;

    Collective(String testName, String displayName) {
        this.testName = testName;
        this.displayName = displayName;
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

    /**
     * nccl-tests' factor from algorithm bandwidth to bus bandwidth for {@code ranks} ranks:
     * 2(n-1)/n for AllReduce, (n-1)/n for AllGather and ReduceScatter, 1 for Broadcast and Reduce.
     */
    public double busFactor(int ranks) {
        switch (this) {
            case ALL_REDUCE: return ranks == 0 ? 0 : 2.0 * (ranks - 1) / ranks;
            case ALL_GATHER:
            case REDUCE_SCATTER: return ranks == 0 ? 0 : (double) (ranks - 1) / ranks;
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
