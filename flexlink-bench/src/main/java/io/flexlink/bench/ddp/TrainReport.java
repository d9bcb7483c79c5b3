package io.flexlink.bench.ddp;

import io.flexlink.CommStats;
import io.flexlink.ddp.BucketView;
import java.io.PrintStream;
import java.util.Locale;

/** Prints a run: the buckets, the loss per step, whether the replicas agree, bytes per path, and the overlap. */
final class TrainReport {
    private TrainReport() {
    }

    static String size(long bytes) {
        if (bytes >= 1L << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
        }
        if (bytes >= 1L << 10) {
            return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return bytes + " B";
    }

    /** The report of rank 0's result of a run of {@code ranks} ranks ({@code where}: how they were started). */
    static void print(PrintStream out, TrainOptions o, String backend, int ranks, String where, RankResult r) {
        out.printf(Locale.ROOT, "FlexLink data-parallel training: %s backend, %d rank%s %s, MLP %s (%s of gradients),"
                        + " %d samples per rank, %d steps, SGD lr %s, %s%s%n", backend, ranks, ranks == 1 ? "" : "s",
                where, o.layersText(), size(r.gradientBytes()), o.batch(), o.steps(), o.lr(),
                o.average() ? "AVG" : "SUM x 1/" + ranks,
                o.cast().equals("none") ? "" : ", gradients carried as " + o.cast());
        out.printf("buckets%s: %d%n", o.rebuild() ? " (after the rebuild from the first step's ready order)" : "",
                r.buckets().size());
        for (BucketView b : r.buckets()) {
            out.printf("  bucket %d: %s (%s, %s, %s)%n", b.index(), String.join(", ", b.parameters()), size(b.bytes()),
                    b.inPlace() ? "in place" : "copied", b.wireType().ncclName());
        }
        for (int s = 0; s < r.losses().length; s++) {
            out.printf(Locale.ROOT, "step %3d  loss %.9g%n", s + 1, r.losses()[s]);
        }
        out.printf("weights after %d steps: %s (sha-256 %s)%n", o.steps(),
                !r.sameOnAllRanks() ? "DIFFER between ranks" : ranks == 1 ? "one rank" : "identical on all " + ranks
                        + " ranks", r.weights());
        StringBuilder paths = new StringBuilder();
        for (CommStats.PathTotals p : r.paths()) {
            paths.append(paths.length() == 0 ? "" : ", ").append(p.path()).append(' ').append(size(p.bytes()))
                    .append(" in ").append(p.calls()).append(" calls");
        }
        out.println("bytes per path, rank 0: " + (paths.length() == 0 ? "none" : paths));
        double[] ms = r.medianMillis();
        if (ms.length == StepMode.values().length) {
            double compute = ms[StepMode.COMPUTE_ONLY.ordinal()];
            double after = ms[StepMode.AFTER_BACKWARD.ordinal()];
            double overlap = ms[StepMode.OVERLAP.ordinal()];
            out.printf(Locale.ROOT, "step time, median of %d, rank 0: %s %.3f ms | %s %.3f ms | %s %.3f ms%n",
                    o.timingRounds(), StepMode.COMPUTE_ONLY.text, compute, StepMode.AFTER_BACKWARD.text, after,
                    StepMode.OVERLAP.text, overlap);
            double comm = after - compute;
            out.printf(Locale.ROOT, "time hidden by overlap: %.3f ms per step (%.0f %% of the %.3f ms the AllReduces "
                    + "add after backward)%n", after - overlap, comm > 0 ? 100 * (after - overlap) / comm : 0, comm);
            out.printf(Locale.ROOT, "| %s | %d | %s | %s | %.3f | %.3f | %.3f | %.3f |%n", backend, ranks,
                    o.layersText() + " x" + o.batch(), size(r.gradientBytes()), compute, after, overlap,
                    after - overlap);
        }
    }
}
