package io.flexlink.bootstrap;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.runtime.RankExchange;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which ranks share a node: nodes are numbered in the order of their lowest rank, and a rank's local
 * index is its position among its node's ranks in rank order, so every rank computes the same layout
 * from the same ids (whatever LOCAL_RANK the launcher set, which only picks the device).
 */
public final class NodeLayout {
    private final String[] ids;
    private final int[] node;
    private final int[] local;
    private final List<int[]> members;

    private NodeLayout(String[] ids) {
        this.ids = ids.clone();
        this.node = new int[ids.length];
        this.local = new int[ids.length];
        Map<String, List<Integer>> byId = new LinkedHashMap<>();
        for (int r = 0; r < ids.length; r++) {
            byId.computeIfAbsent(ids[r], k -> new ArrayList<>()).add(r);
        }
        this.members = new ArrayList<>();
        for (List<Integer> ranks : byId.values()) {
            int n = members.size();
            int[] m = new int[ranks.size()];
            for (int i = 0; i < m.length; i++) {
                m[i] = ranks.get(i);
                node[m[i]] = n;
                local[m[i]] = i;
            }
            members.add(m);
        }
    }

    /** The layout of ranks whose node ids are {@code ids} (indexed by rank). */
    public static NodeLayout of(String[] ids) {
        return new NodeLayout(ids);
    }

    /** Every rank sends its node id; one round of {@code exchange}. */
    public static NodeLayout exchange(RankExchange exchange, String myNodeId) {
        byte[][] all = exchange.allGather(myNodeId.getBytes(StandardCharsets.UTF_8));
        String[] ids = new String[all.length];
        for (int r = 0; r < all.length; r++) {
            if (all[r].length == 0 || all[r].length > NodeIdentity.MAX_BYTES) {
                throw new FlexLinkException(Result.INTERNAL_ERROR, "rank " + r + " sent a node id of " + all[r].length
                        + " bytes");
            }
            ids[r] = new String(all[r], StandardCharsets.UTF_8);
        }
        return of(ids);
    }

    public int ranks() {
        return ids.length;
    }

    public int nodes() {
        return members.size();
    }

    public int nodeOf(int rank) {
        return node[rank];
    }

    public int localIndex(int rank) {
        return local[rank];
    }

    /** The ranks of node {@code n}, ascending. */
    public int[] ranksOn(int n) {
        return members.get(n).clone();
    }

    /** The rank with local index {@code l} on node {@code n}. */
    public int rankAt(int n, int l) {
        return members.get(n)[l];
    }

    /** The node id of node {@code n}. */
    public String nodeId(int n) {
        return ids[members.get(n)[0]];
    }

    /** The ranks per node when every node has the same number, else -1. */
    public int ranksPerNode() {
        int l = members.get(0).length;
        for (int[] m : members) {
            if (m.length != l) {
                return -1;
            }
        }
        return l;
    }

    /** True when rank {@code j * L + l} is local index {@code l} of node {@code j} (block placement). */
    public boolean nodeMajor() {
        int l = ranksPerNode();
        for (int r = 0; r < ids.length && l > 0; r++) {
            if (node[r] != r / l || local[r] != r % l) {
                return false;
            }
        }
        return l > 0;
    }

    /** True when rank {@code l * N + j} is local index {@code l} of node {@code j} (round-robin placement). */
    public boolean localMajor() {
        int l = ranksPerNode();
        int n = nodes();
        for (int r = 0; r < ids.length && l > 0; r++) {
            if (node[r] != r % n || local[r] != r / n) {
                return false;
            }
        }
        return l > 0;
    }

    /**
     * Fails with INVALID_USAGE when the nodes hold different numbers of ranks: the rails of a hierarchical
     * communicator join the ranks of one local index, one per node, so every node needs every index.
     */
    public void requireUniform() {
        if (ranksPerNode() > 0) {
            return;
        }
        StringBuilder sb = new StringBuilder();
        for (int n = 0; n < members.size(); n++) {
            sb.append(n == 0 ? "" : ", ").append("node '").append(NodeIdentity.displayName(nodeId(n))).append("' has ")
                    .append(members.get(n).length).append(" (ranks ").append(Arrays.toString(members.get(n))).append(')');
        }
        throw new FlexLinkException(Result.INVALID_USAGE, "nodes with different rank counts: " + sb
                + "; a multi-node communicator needs the same number of ranks on every node (start as many "
                + "processes per node, or set flexlink.nodeId to group them)");
    }

    /** {@code nodes 2 × ranks 4}, or the counts per node when they differ. */
    public String describe() {
        int l = ranksPerNode();
        if (l > 0) {
            return "nodes " + nodes() + " × ranks " + l;
        }
        int[] counts = members.stream().mapToInt(m -> m.length).toArray();
        return "nodes " + nodes() + " × ranks " + Arrays.toString(counts);
    }
}
