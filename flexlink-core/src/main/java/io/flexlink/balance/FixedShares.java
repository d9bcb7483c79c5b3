package io.flexlink.balance;

import io.flexlink.Collective;
import java.util.List;
import java.util.Map;

/** Shares fixed by configuration ({@code flexlink.share=pcie=0.25}), the same for every call; never timed. */
public final class FixedShares implements Shares {
    private final double[] fixed;

    /** @param auxPaths the auxiliary paths in the communicator's order */
    public FixedShares(List<String> auxPaths, Map<String, Double> shares) {
        fixed = new double[auxPaths.size()];
        for (int i = 0; i < fixed.length; i++) {
            fixed[i] = shares.getOrDefault(auxPaths.get(i), 0.0);
        }
    }

    @Override
    public int decide(Collective collective, long bytes, double[] fractions) {
        current(collective, bytes, fractions);
        return -1;
    }

    @Override
    public void current(Collective collective, long bytes, double[] fractions) {
        System.arraycopy(fixed, 0, fractions, 0, fixed.length);
    }
}
