package io.flexlink.bench;

import io.flexlink.CommStats;
import io.flexlink.Communicator;
import java.io.PrintStream;
import java.util.Locale;

/**
 * The node layout for the header ({@code # Nodes: nodes 2 × ranks 2, rails TCP ring}) and, with
 * --history, each hierarchical stage's calls, bytes and mean time on rank 0 (intra-node before the
 * rails, the rails, intra-node after them).
 */
final class NodeReport {
    private NodeReport() {
    }

    /** The header line: the layout of a multi-node communicator, or one node of all the ranks. */
    static String header(Communicator comm) {
        CommStats.Hierarchy h = comm.stats().hierarchy();
        return h == null ? "# Nodes: nodes 1 × ranks " + comm.size()
                : "# Nodes: " + h.layout() + ", rails " + h.rail() + " (ranks of one local index, one per node)";
    }

    /** The stage times of a multi-node communicator; nothing for one node. */
    static void stages(PrintStream out, Communicator comm) {
        CommStats.Hierarchy h = comm.stats().hierarchy();
        if (h == null) {
            return;
        }
        out.println("# Hierarchy stages (rank 0, " + h.layout() + "): calls, bytes per rank, mean time of the timed calls");
        for (CommStats.PathTotals s : h.stages()) {
            out.printf(Locale.ROOT, "#   %-10s calls %6d bytes %14d mean %10.4f ms (%d timed)%n", s.path(), s.calls(),
                    s.bytes(), s.timedCalls() == 0 ? 0 : 1e3 * s.seconds() / s.timedCalls(), s.timedCalls());
        }
        out.flush();
    }
}
