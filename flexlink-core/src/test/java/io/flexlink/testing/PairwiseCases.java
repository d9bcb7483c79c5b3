package io.flexlink.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A seeded all-pairs sample of a test matrix: every value of every dimension appears, and every pair of
 * values of any two dimensions appears in at least one row. Greedy: each new row is the best of a batch
 * of random candidates, scored by the pairs it covers that no row covered yet.
 */
public final class PairwiseCases {
    private PairwiseCases() {
    }

    /**
     * @param sizes the number of values of each dimension
     * @return rows of value indexes, one per case
     */
    public static List<int[]> generate(int[] sizes, long seed) {
        int d = sizes.length;
        boolean[][][][] covered = new boolean[d][d][][];
        int uncovered = 0;
        for (int i = 0; i < d; i++) {
            for (int j = i + 1; j < d; j++) {
                covered[i][j] = new boolean[sizes[i]][sizes[j]];
                uncovered += sizes[i] * sizes[j];
            }
        }
        Random random = new Random(seed);
        List<int[]> rows = new ArrayList<>();
        while (uncovered > 0) {
            int[] best = null;
            int bestScore = -1;
            for (int k = 0; k < 64; k++) {
                int[] row = candidate(sizes, covered, random);
                int score = score(row, covered);
                if (score > bestScore) {
                    best = row;
                    bestScore = score;
                }
            }
            for (int i = 0; i < d; i++) {
                for (int j = i + 1; j < d; j++) {
                    if (!covered[i][j][best[i]][best[j]]) {
                        covered[i][j][best[i]][best[j]] = true;
                        uncovered--;
                    }
                }
            }
            rows.add(best);
        }
        return rows;
    }

    /** A random row seeded with one uncovered pair, so that every batch can make progress. */
    private static int[] candidate(int[] sizes, boolean[][][][] covered, Random random) {
        int d = sizes.length;
        int[] row = new int[d];
        for (int i = 0; i < d; i++) {
            row[i] = random.nextInt(sizes[i]);
        }
        // plant one uncovered pair, picked by scanning from a random start
        List<int[]> open = new ArrayList<>();
        for (int i = 0; i < d; i++) {
            for (int j = i + 1; j < d; j++) {
                for (int a = 0; a < sizes[i]; a++) {
                    for (int b = 0; b < sizes[j]; b++) {
                        if (!covered[i][j][a][b]) {
                            open.add(new int[] {i, j, a, b});
                        }
                    }
                }
            }
        }
        if (!open.isEmpty()) {
            int[] p = open.get(random.nextInt(open.size()));
            row[p[0]] = p[2];
            row[p[1]] = p[3];
        }
        return row;
    }

    private static int score(int[] row, boolean[][][][] covered) {
        int s = 0;
        for (int i = 0; i < row.length; i++) {
            for (int j = i + 1; j < row.length; j++) {
                if (!covered[i][j][row[i]][row[j]]) {
                    s++;
                }
            }
        }
        return s;
    }
}
