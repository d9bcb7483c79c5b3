package io.flexlink.hier;

import io.flexlink.CommStats;
import io.flexlink.Result;
import java.util.List;
import java.util.Map;

/** A hierarchical communicator's statistics: the node's paths, and the stages and links of the hierarchy. */
final class HierStats {
    private HierStats() {
    }

    static CommStats of(HierRank h, CallScratch shared, boolean closed, Result result, String error) {
        // the paths are the node's (the rail is a stage of hierarchy(), not a path a call is split over)
        CommStats node = h.intra != null && !closed ? h.intra.stats() : null;
        List<CommStats.PathTotals> paths = node == null ? List.of() : node.paths();
        CommStats.Hierarchy hierarchy = new CommStats.Hierarchy(h.nodes, h.localSize, h.rail.describe(),
                shared.stageTotals(), h.rail.bytesReceived(), h.peers == null ? -1 : h.peers.bytesReceived());
        return new CommStats(paths, node == null ? Map.of() : node.shares(), node == null ? List.of() : node.history(),
                node == null ? Map.of() : node.stages(), result, error, hierarchy);
    }
}
