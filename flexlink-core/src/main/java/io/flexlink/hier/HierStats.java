package io.flexlink.hier;

import io.flexlink.CommStats;
import io.flexlink.Result;
import java.util.List;
import java.util.Map;

/** A multi-node communicator's statistics: the node communicator's paths, with the layout and the stage times. */
final class HierStats {
    private HierStats() {
    }

    /**
     * The paths are the node's ({@code node}, null on a node of one rank or once closed): the rail is a stage of
     * the hierarchy, not a path a call is split over.
     */
    static CommStats of(HierRank h, CommStats node, List<CommStats.PathTotals> stages, Result error, String detail) {
        CommStats.Hierarchy hierarchy = new CommStats.Hierarchy(h.nodes, h.localSize, h.rail.describe(), stages,
                h.rail.bytesReceived());
        return new CommStats(node == null ? List.of() : node.paths(), node == null ? Map.of() : node.shares(),
                node == null ? List.of() : node.history(), node == null ? Map.of() : node.stages(), error, detail,
                hierarchy);
    }
}
