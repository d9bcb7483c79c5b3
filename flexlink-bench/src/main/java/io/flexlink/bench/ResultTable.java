package io.flexlink.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The table in the layout of nccl-tests 2.19: its three header lines character for character (with
 * -I, the per-iteration variant: i_min, i_max, i_p99, i_cv% after each #wrong), one row per size, and
 * its footer; then FlexLink's extra columns: {@code share_<path>} per auxiliary path, and with
 * --baseline {@code vs} and {@code prim}. Times and bandwidths print as nccl-tests prints them: two
 * decimals, fewer when the value would not fit.
 */
final class ResultTable {
    private final PrintStream out;
    private final List<String> auxPaths;
    private final boolean check;
    private final boolean baseline;
    private final boolean perIter;
    /** The time columns' label: {@code time}, or {@code cputime} with -C 1. */
    private String timeLabel = "time";
    /** Sum and count of the busbw of every timed run (out of place and in place), for the footer. */
    private double busBwSum;
    private int runs;
    /** Wrong elements, and runs (out of place or in place) that had any: nccl-tests' "Out of bounds values". */
    private long wrong;
    private int failedRuns;

    ResultTable(PrintStream out, List<String> auxPaths, boolean check, boolean baseline, boolean perIter) {
        this.out = out;
        this.auxPaths = auxPaths;
        this.check = check;
        this.baseline = baseline;
        this.perIter = perIter;
    }

    private static int shareWidth(String path) {
        return Math.max(6, ("share_" + path).length());
    }

    /** nccl-tests' three header lines, each ending as nccl-tests' does (a space for its timestamp column). */
    static String[] ncclHeader(boolean perIter) {
        return ncclHeader(perIter, "time");
    }

    /** The same, with {@code time} the label of the time columns ({@code cputime} with -C 1, as nccl-tests). */
    static String[] ncclHeader(boolean perIter, String time) {
        String[] blanks = {"", "", "", "", ""};
        if (perIter) {
            String f = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s %s";
            return new String[] {
                String.format(Locale.ROOT, "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)"
                        + "                                in-place (+ per-iteration)", (Object[]) blanks),
                String.format(Locale.ROOT, f, "size", "count", "type", "redop", "root", time, "algbw", "busbw",
                        "#wrong", "i_min", "i_max", "i_p99", "i_cv%", time, "algbw", "busbw", "#wrong", "i_min",
                        "i_max", "i_p99", "i_cv%", ""),
                String.format(Locale.ROOT, f, "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                        "(us)", "(us)", "(%)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)", ""),
            };
        }
        String f = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s";
        return new String[] {
            String.format(Locale.ROOT, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
                    + "in-place          ", (Object[]) blanks),
            String.format(Locale.ROOT, f, "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong",
                    time, "algbw", "busbw", "#wrong", ""),
            String.format(Locale.ROOT, f, "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                    "(GB/s)", "(GB/s)", "", ""),
        };
    }

    /** -C 1: the time columns hold the host's time (nccl-tests' cputime). */
    ResultTable cpuTime(boolean cpu) {
        timeLabel = cpu ? "cputime" : "time";
        return this;
    }

    void header() {
        String[] nccl = ncclHeader(perIter, timeLabel);
        out.println("#");
        if (auxPaths.isEmpty() && !baseline) {
            for (String l : nccl) {
                out.println(l);
            }
            out.flush();
            return;
        }
        // the extra columns follow nccl-tests' columns (without its trailing timestamp space), aligned with the rows
        int width = nccl[1].length() - 1;
        StringBuilder[] l = new StringBuilder[3];
        for (int i = 0; i < 3; i++) {
            String base = nccl[i].length() > width ? nccl[i].substring(0, width) : nccl[i];
            l[i] = new StringBuilder(base);
            while (l[i].length() < width) {
                l[i].append(' ');
            }
        }
        for (String p : auxPaths) {
            extra(l, shareWidth(p), "share_" + p, "(frac)");
        }
        if (baseline) {
            extra(l, 6, "vs", "(x)");
            extra(l, 6, "prim", "(x)");
        }
        for (StringBuilder b : l) {
            out.println(b);
        }
        out.flush();
    }

    private static void extra(StringBuilder[] l, int w, String name, String unit) {
        l[0].append(String.format(Locale.ROOT, "  %" + w + "s", ""));
        l[1].append(String.format(Locale.ROOT, "  %" + w + "s", name));
        l[2].append(String.format(Locale.ROOT, "  %" + w + "s", unit));
    }

    /** Prints one row and adds it to the footer's totals. */
    void row(Row r) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%12d  %12d  %8s  %6s  %6d",
                r.bytes, r.count, r.type.ncclName(), r.opName(), r.root));
        body(sb, r.outOfPlace);
        body(sb, r.inPlace);
        for (int i = 0; i < auxPaths.size(); i++) {
            int w = shareWidth(auxPaths.get(i));
            double s = i < r.shares.length ? r.shares[i] : 0;
            sb.append(String.format(Locale.ROOT, "  %" + w + ".3f", s));
        }
        if (baseline) {
            sb.append("  ").append(ratio(r.vs())).append("  ").append(ratio(r.primaryVs()));
        }
        out.println(sb);
        out.flush();
        count(r.outOfPlace);
        count(r.inPlace);
    }

    private static String ratio(double v) {
        return Double.isNaN(v) ? String.format(Locale.ROOT, "%6s", "N/A") : CFormat.fit(v, 6);
    }

    private void body(StringBuilder sb, Row.Run run) {
        sb.append(String.format(Locale.ROOT, "  %7s  %6s  %6s", CFormat.fit(run.timeUs, 7), CFormat.fit(run.algBw, 6),
                CFormat.fit(run.busBw, 6)));
        // N/A without -c, and for a run that is not checked (sendrecv in place), as nccl-tests prints it
        sb.append(check && run.wrong >= 0 ? String.format(Locale.ROOT, "  %6s", CFormat.g(run.wrong)) : "    N/A");
        if (perIter) {
            IterStats s = run.iterations;
            sb.append(String.format(Locale.ROOT, "  %7s  %7s  %7s  %7s", CFormat.fit(s.min * 1e6, 7),
                    CFormat.fit(s.max * 1e6, 7), CFormat.fit(s.p99 * 1e6, 7), CFormat.fit(s.cvPercent(), 7)));
        }
    }

    private void count(Row.Run run) {
        busBwSum += run.busBw;
        runs++;
        if (run.wrong > 0) {
            wrong += run.wrong;
            failedRuns++;
        }
    }

    /** Wrong elements over every run. */
    long wrong() {
        return wrong;
    }

    /** Runs with wrong elements: nccl-tests' "Out of bounds values". */
    int failedRuns() {
        return failedRuns;
    }

    /**
     * nccl-tests' "Avg bus bandwidth": the mean busbw over every run timed, out of place and in place
     * (nccl-tests adds each run's busbw and counts it, then divides).
     */
    double averageBusBw() {
        return runs == 0 ? 0 : busBwSum / runs;
    }

    /** Whether the average passes NCCL_TESTS_MIN_BW (nccl-tests fails below 0.9 x the minimum); true when unset. */
    boolean averagePasses(double minBusBw) {
        return Double.isNaN(minBusBw) || averageBusBw() >= minBusBw * 0.9;
    }

    /** nccl-tests' footer, NCCL_TESTS_MIN_BW's verdict after the average when it is set. */
    void footer(String program, double minBusBw) {
        out.printf(Locale.ROOT, "# %-20s : %d %s%n", "Out of bounds values", failedRuns, failedRuns != 0 ? "FAILED" : "OK");
        String verdict = Double.isNaN(minBusBw) ? "" : averagePasses(minBusBw) ? "OK" : "FAILED";
        out.printf(Locale.ROOT, "# %-20s : %s %s%n", "Avg bus bandwidth", CFormat.g(averageBusBw()), verdict);
        out.println("#");
        out.println("# Collective test concluded: " + program);
        out.println("#");
        out.println();
        out.flush();
    }
}
