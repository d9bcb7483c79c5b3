package io.flexlink.bench;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What a run reports after its rows: the balancer's shares, the gate's verdict, the JSON and the plot. */
final class RunReport {
    private final PerfOptions o;
    private final PrintStream out;
    private final PrintStream err;

    RunReport(PerfOptions o, PrintStream out, PrintStream err) {
        this.o = o;
        this.out = out;
        this.err = err;
    }

    /** The balancer's converged shares per size bucket, and with --history its decisions. */
    void balance(Communicator comm) {
        CommStats stats = comm.stats();
        if (stats.shares().isEmpty()) {
            return;
        }
        out.println("# Balanced shares (collective/bucket: auxiliary shares):");
        for (Map.Entry<String, Map<String, Double>> e : stats.shares().entrySet()) {
            StringBuilder sb = new StringBuilder("#   ").append(e.getKey());
            for (Map.Entry<String, Double> p : e.getValue().entrySet()) {
                sb.append(' ').append(p.getKey()).append('=').append(String.format(Locale.ROOT, "%.4f", p.getValue()));
            }
            out.println(sb);
        }
        if (o.flex.history) {
            out.println("# Balancer decisions (rank 0):");
            for (String line : stats.history()) {
                out.println("#   " + line);
            }
        }
        out.flush();
    }

    void gate(Gate gate, boolean passed, int rows) {
        if (passed) {
            out.println("# Gate: passed (" + gate.describe() + ")");
            return;
        }
        out.println("# Gate: FAILED (" + gate.describe() + ") in " + gate.failures().size() + " of " + rows + " rows:");
        for (String f : gate.failures()) {
            out.println("#   " + f);
        }
        err.println("flexlink-perf: gate failed in " + gate.failures().size() + " rows (" + gate.describe() + ")");
    }

    /** --json and --plot (their paths were checked before the run). */
    void files(Sweep.RunParts p, List<Row> rows, Row.Basis basis, ResultTable table, Gate gate, boolean gatePassed)
            throws IOException {
        FlexOptions f = o.flex;
        if (f.json != null) {
            JsonReport.write(f.json, o, p, rows, basis, table, gate, gatePassed);
        }
        if (f.plot != null) {
            String title = String.format(Locale.ROOT, "%s, %d ranks, %s backend", o.collective.testName(),
                    o.worldSize(), p.env.backend);
            try {
                PlotWriter.write(f.plot, title, rows, p.meter.auxPaths());
            } catch (LinkageError e) {
                // a jlinked runtime without java.desktop: the table and the JSON are still good
                err.println("flexlink-perf: --plot skipped, this Java has no java.desktop (" + e
                        + "); draw it elsewhere with --replot " + (f.json == null ? "RUN.json" : f.json)
                        + " --plot " + f.plot);
            }
        }
    }
}
