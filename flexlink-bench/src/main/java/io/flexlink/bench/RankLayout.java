package io.flexlink.bench;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which communicator each rank of the job calls its collectives on: the whole job's, or with
 * NCCL_TESTS_SPLIT the sub-communicator of its color ({@link TestsSplit}), in which it is ranked by its
 * rank in the job. Sizes, counts, in-place offsets, peers, roots, the check's expected values and busbw all
 * follow the communicator a rank calls, so they use {@link #commSize()} and {@link #commRank}; times and
 * wrong elements still combine every rank of the job, as nccl-tests combines them over MPI_COMM_WORLD.
 */
final class RankLayout {
    /** The split, or null for none. */
    final TestsSplit split;
    private final int worldSize;
    private final int[] colors;
    private final int[] commRanks;
    private final int commSize;
    private final int groups;

    private RankLayout(TestsSplit split, int worldSize, int[] colors, int[] commRanks, int commSize, int groups) {
        this.split = split;
        this.worldSize = worldSize;
        this.colors = colors;
        this.commRanks = commRanks;
        this.commSize = commSize;
        this.groups = groups;
    }

    /** Every rank in one communicator. */
    static RankLayout whole(int worldSize) {
        int[] ranks = new int[worldSize];
        for (int r = 0; r < worldSize; r++) {
            ranks[r] = r;
        }
        return new RankLayout(null, worldSize, new int[worldSize], ranks, worldSize, 1);
    }

    /**
     * The ranks split by {@code split}'s colors. Every sub-communicator must have the same size: one row has
     * one count, one buffer layout and one expected output per rank position (nccl-tests prints the counts
     * and bandwidths of rank 0's sub-communicator and would check the others by their own sizes).
     */
    static RankLayout split(TestsSplit split, int worldSize) {
        int[] colors = new int[worldSize];
        int[] ranks = new int[worldSize];
        Map<Integer, Integer> sizes = new TreeMap<>();
        for (int r = 0; r < worldSize; r++) {
            colors[r] = split.color(r);
            ranks[r] = sizes.merge(colors[r], 1, Integer::sum) - 1; // ranked by rank, the key nccl-tests passes
        }
        if (sizes.values().stream().distinct().count() > 1) {
            StringBuilder s = new StringBuilder();
            sizes.forEach((color, size) -> s.append(s.length() == 0 ? "" : ", ").append(size).append(" (color ")
                    .append(color).append(')'));
            throw new FlexLinkException(Result.INVALID_ARGUMENT, split.variable + ": '" + split.text + "' ("
                    + split.rule() + ") on " + worldSize + " ranks gives sub-communicators of " + s + " ranks; "
                    + "flexlink-perf needs them all of one size (a row has one count, layout and check)");
        }
        int size = sizes.values().iterator().next();
        return new RankLayout(split, worldSize, colors, ranks, size, sizes.size());
    }

    int worldSize() {
        return worldSize;
    }

    /** The ranks of each communicator the collectives run on. */
    int commSize() {
        return commSize;
    }

    /** How many communicators run each call at once (1 without a split). */
    int groups() {
        return groups;
    }

    /** The color (nccl-tests' Group) of job rank {@code rank}: 0 without a split. */
    int color(int rank) {
        return colors[rank];
    }

    /** The rank of job rank {@code rank} in its communicator. */
    int commRank(int rank) {
        return commRanks[rank];
    }

    /**
     * The key job rank {@code rank} splits with, for FlexLink's split and NCCL's alike: the rank itself,
     * as nccl-tests' MPI_Comm_split passes it. A split ranks each color's members by key, which gives
     * {@link #commRank}.
     */
    int splitKey(int rank) {
        return rank;
    }
}
