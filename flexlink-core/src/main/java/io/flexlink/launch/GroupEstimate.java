package io.flexlink.launch;

import io.flexlink.Collective;
import io.flexlink.balance.Shares;
import io.flexlink.path.CollectiveCall;

/**
 * How long a communicator's calls recorded in a group would take ({@code ncclGroupSimulateEnd}): the calls of
 * one communicator run one after the other on its streams, so their times add up. A call's time is the
 * balancer's measurement for its collective and size bucket where it has one ({@link Shares#estimateSeconds});
 * else a rough alpha-beta figure, {@link #LATENCY_SECONDS} plus its bus bytes at {@link #BUS_BYTES_PER_SECOND}
 * (the order of one PCIe Gen5 x16 direction), a guide for comparing groups, not a prediction of the hardware.
 */
public final class GroupEstimate {
    /** The alpha of the fallback: a call's fixed cost. */
    public static final double LATENCY_SECONDS = 10e-6;
    /** The beta of the fallback: bus bytes per second. */
    public static final double BUS_BYTES_PER_SECOND = 25e9;

    private GroupEstimate() {
    }

    /** The estimated seconds of {@code calls} on a communicator of {@code ranks} ranks with {@code shares}. */
    public static double seconds(GroupedCalls calls, Shares shares, int ranks) {
        double total = 0;
        for (int i = 0; i < calls.size(); i++) {
            CollectiveCall c = calls.get(i).call;
            long bytes = c.bytes(ranks);
            double measured = shares.estimateSeconds(c.collective, bytes);
            total += Double.isNaN(measured) ? fallback(c.collective, bytes, ranks) : measured;
        }
        return total;
    }

    /** nccl-tests' bus bytes: an AllReduce moves 2(n-1)/n of its buffer per rank, the others about once. */
    static double fallback(Collective c, long bytes, int ranks) {
        double factor = c == Collective.ALL_REDUCE && ranks > 1 ? 2.0 * (ranks - 1) / ranks : 1.0;
        return LATENCY_SECONDS + factor * bytes / BUS_BYTES_PER_SECOND;
    }
}
