package io.flexlink.balance;

import io.flexlink.Collective;

/** Decides how much of a call each auxiliary path carries. Must answer identically on every rank. */
public interface ShareProvider {
    /**
     * Fills {@code fractions[i]} with the share of auxiliary path {@code i} for a call of
     * {@code collective} moving {@code bytes} bytes per rank; the primary path takes the rest.
     */
    void shares(Collective collective, long bytes, double[] fractions);
}
