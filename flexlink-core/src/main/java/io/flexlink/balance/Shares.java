package io.flexlink.balance;

import io.flexlink.Collective;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How much of a call each auxiliary path carries. Two verbs: {@link #decide} plans a call (and may count
 * it, wait for the peers' agreement at a decision point, move to new shares), {@link #record} feeds the
 * measured times of a call back. Must answer identically on every rank for the same call.
 */
public interface Shares {
    /**
     * Fills {@code fractions[i]} with auxiliary path {@code i}'s share of this call of {@code collective},
     * moving {@code bytes} per rank (the primary path takes the rest); returns a token for {@link #record}
     * when the call should be timed, else -1.
     */
    int decide(Collective collective, long bytes, double[] fractions);

    /** The shares {@link #decide} would give now, without counting the call (a call captured in a graph). */
    void current(Collective collective, long bytes, double[] fractions);

    /** The per-path times (seconds, NaN for a path that carried nothing) of a call decided with {@code token}. */
    default void record(int token, float[] times) {
    }

    /**
     * The time (seconds, this rank's measurement) that a call of {@code collective} moving {@code bytes} per rank
     * was followed or preceded by outside this communicator, within one call of the caller's: the inter-node
     * stage of a multi-node call whose node stage this call was. A balancer may weigh its decisions by it; it
     * must agree it among the ranks first, like the path times.
     */
    default void outside(Collective collective, long bytes, float seconds) {
    }

    /**
     * The measured completion time (seconds) of a call of {@code collective} moving {@code bytes} per rank under
     * the current shares, for {@code groupSimulateEnd}; NaN where nothing was measured (fixed shares never are).
     */
    default double estimateSeconds(Collective collective, long bytes) {
        return Double.NaN;
    }

    /** True when calls are ever timed (then the engine keeps timing events). */
    default boolean timed() {
        return false;
    }

    /** Current auxiliary shares per size bucket, for stats (empty when they are fixed). */
    default Map<String, Map<String, Double>> shareTable() {
        return new LinkedHashMap<>();
    }

    /** The stage per size bucket, for stats. */
    default Map<String, String> stageTable() {
        return new LinkedHashMap<>();
    }

    /** Decisions so far, oldest first, for stats. */
    default List<String> history() {
        return new ArrayList<>();
    }
}
