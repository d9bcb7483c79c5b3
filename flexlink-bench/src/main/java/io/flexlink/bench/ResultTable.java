package io.flexlink.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The table in nccl-tests' layout: the three header lines (character for character those of nccl-tests,
 * with the 7-wide {@code #wrong} column of its classic output), one row per size with out-of-place and
 * in-place time, algbw, busbw and #wrong, and the footer (the current nccl-tests footer); then FlexLink's
 * extra columns: one {@code share_<path>} per auxiliary path and {@code vs} with --baseline. Times and
 * bandwidths print as nccl-tests prints them: two decimals, fewer when the value would not fit.
 */
final class ResultTable {
    private final PrintStream out;
    private final List<String> auxPaths;
    private final boolean check;
    private final boolean baseline;
    /** Sum and count of the busbw of every timed run (out of place and in place), for the footer. */
    private double busBwSum;
    private int runs;
    private long wrong;

    ResultTable(PrintStream out, List<String> auxPaths, boolean check, boolean baseline) {
        this.out = out;
        this.auxPaths = auxPaths;
        this.check = check;
        this.baseline = baseline;
    }

    private int shareWidth(String path) {
        return Math.max(6, ("share_" + path).length());
    }

    void header() {
        String[] blanks = {"", "", "", "", ""};
        StringBuilder l1 = new StringBuilder(String.format(Locale.ROOT,
                "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          ",
                (Object[]) blanks));
        StringBuilder l2 = new StringBuilder(String.format(Locale.ROOT,
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                "time", "algbw", "busbw", "#wrong"));
        StringBuilder l3 = new StringBuilder(String.format(Locale.ROOT,
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""));
        if (!auxPaths.isEmpty() || baseline) {
            // nccl-tests' three lines are equally wide; the extra columns follow them
            l1.setLength(Math.min(l1.length(), l2.length()));
            while (l1.length() < l2.length()) {
                l1.append(' ');
            }
            for (String p : auxPaths) {
                int w = shareWidth(p);
                l1.append(String.format(Locale.ROOT, "  %" + w + "s", ""));
                l2.append(String.format(Locale.ROOT, "  %" + w + "s", "share_" + p));
                l3.append(String.format(Locale.ROOT, "  %" + w + "s", "(frac)"));
            }
            if (baseline) {
                l1.append(String.format(Locale.ROOT, "  %6s", ""));
                l2.append(String.format(Locale.ROOT, "  %6s", "vs"));
                l3.append(String.format(Locale.ROOT, "  %6s", "(x)"));
            }
        }
        out.println("#");
        out.println(l1);
        out.println(l2);
        out.println(l3);
        out.flush();
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
            double vs = r.vs();
            sb.append("  ").append(Double.isNaN(vs) ? String.format(Locale.ROOT, "%6s", "N/A") : CFormat.fit(vs, 6));
        }
        out.println(sb);
        out.flush();
        count(r.outOfPlace);
        count(r.inPlace);
        wrong += r.wrong();
    }

    private void body(StringBuilder sb, Row.Run run) {
        String w = check ? CFormat.g(Math.max(0, run.wrong)) : "N/A";
        sb.append(String.format(Locale.ROOT, "  %7s  %6s  %6s %6s",
                CFormat.fit(run.timeUs, 7), CFormat.fit(run.algBw, 6), CFormat.fit(run.busBw, 6), w));
    }

    private void count(Row.Run run) {
        if (run != null) {
            busBwSum += run.busBw;
            runs++;
        }
    }

    long wrong() {
        return wrong;
    }

    /**
     * nccl-tests' "Avg bus bandwidth": the mean busbw over every run timed, out of place and in place
     * (nccl-tests adds each run's busbw and counts it, then divides).
     */
    double averageBusBw() {
        return runs == 0 ? 0 : busBwSum / runs;
    }

    void footer(String program) {
        out.printf(Locale.ROOT, "# %-20s : %d %s%n", "Out of bounds values", wrong, wrong != 0 ? "FAILED" : "OK");
        out.printf(Locale.ROOT, "# %-20s : %s %n", "Avg bus bandwidth", CFormat.g(averageBusBw()));
        out.println("#");
        out.println("# Collective test concluded: " + program);
        out.flush();
    }
}
