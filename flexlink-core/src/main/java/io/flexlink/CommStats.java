package io.flexlink;

import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of what a communicator has done: per path, the bytes it moved and the time it took; the
 * share each auxiliary path has per collective and size bucket; and the balancer's decisions.
 */
public final class CommStats {
    /** One path's totals. */
    public static final class PathTotals {
        private final String path;
        private final long calls;
        private final long bytes;
        private final double seconds;
        private final long timedCalls;

        public PathTotals(String path, long calls, long bytes, double seconds, long timedCalls) {
            this.path = path;
            this.calls = calls;
            this.bytes = bytes;
            this.seconds = seconds;
            this.timedCalls = timedCalls;
        }

        public String path() {
            return path;
        }

        /** Calls in which this path carried elements. */
        public long calls() {
            return calls;
        }

        /** Bytes of the user's buffers this path carried (per rank). */
        public long bytes() {
            return bytes;
        }

        /**
         * Measured time of this path's work, summed over the {@link #timedCalls()} calls that were timed.
         * Only the balancer times calls (never waiting for them): with fixed shares nothing is timed.
         */
        public double seconds() {
            return seconds;
        }

        /** Calls whose time is in {@link #seconds()}: {@code seconds() / timedCalls()} is a mean time per call. */
        public long timedCalls() {
            return timedCalls;
        }

        @Override
        public String toString() {
            return path + ": " + calls + " calls, " + bytes + " B, " + String.format("%.6f", seconds) + " s over "
                    + timedCalls + " timed calls";
        }
    }

    /**
     * The layout and stage times of a communicator that spans several nodes: FlexLink's paths inside each
     * node, rails (the ranks of one local index, one per node) across them. Each stage is timed like a path.
     */
    public static final class Hierarchy {
        private final int nodes;
        private final int ranksPerNode;
        private final String rail;
        private final List<PathTotals> stages;
        private final long railBytesReceived;
        private final long peerBytesReceived;

        public Hierarchy(int nodes, int ranksPerNode, String rail, List<PathTotals> stages) {
            this(nodes, ranksPerNode, rail, stages, -1, -1);
        }

        public Hierarchy(int nodes, int ranksPerNode, String rail, List<PathTotals> stages, long railBytesReceived) {
            this(nodes, ranksPerNode, rail, stages, railBytesReceived, -1);
        }

        public Hierarchy(int nodes, int ranksPerNode, String rail, List<PathTotals> stages, long railBytesReceived,
                         long peerBytesReceived) {
            this.peerBytesReceived = peerBytesReceived;
            this.nodes = nodes;
            this.ranksPerNode = ranksPerNode;
            this.rail = rail;
            this.stages = Collections.unmodifiableList(stages);
            this.railBytesReceived = railBytesReceived;
        }

        /**
         * Payload bytes this rank's rail has read from the network since it was made, counted where they
         * arrive (the TCP rail's receiver thread, before the stream may use them); -1 where the transport
         * does not say (NCCL). The stages' bytes are what the calls asked for; this is what came in.
         */
        public long railBytesReceived() {
            return railBytesReceived;
        }

        /**
         * Payload bytes of Send and Recv from other nodes this rank has read from the network since it was made
         * (the host backend's peer links, counted like {@link #railBytesReceived}); -1 where the transport does
         * not say (NCCL). The rails carry none of them.
         */
        public long peerBytesReceived() {
            return peerBytesReceived;
        }

        public int nodes() {
            return nodes;
        }

        public int ranksPerNode() {
            return ranksPerNode;
        }

        /** The rails' transport: {@code NCCL 2.28.3}, or {@code TCP ring} on the host backend. */
        public String rail() {
            return rail;
        }

        /**
         * The stages in call order: {@code intra.pre} (inside the node, before the rails: a ReduceScatter
         * of AllReduce, ReduceScatter and Reduce, the root node's Broadcast), {@code inter} (the rail) and
         * {@code intra.post} (inside the node, after the rails: an AllGather). Bytes are per rank.
         */
        public List<PathTotals> stages() {
            return stages;
        }

        /** {@code nodes 2 × ranks 4}. */
        public String layout() {
            return "nodes " + nodes + " × ranks " + ranksPerNode;
        }

        @Override
        public String toString() {
            return layout() + " rail " + rail + " " + stages;
        }
    }

    private final List<PathTotals> paths;
    private final Map<String, Map<String, Double>> shares;
    private final List<String> history;
    private final Map<String, String> stages;
    private final Result asyncError;
    private final String errorDetail;
    private final Hierarchy hierarchy;

    public CommStats(List<PathTotals> paths, Map<String, Map<String, Double>> shares, List<String> history,
                     Map<String, String> stages) {
        this(paths, shares, history, stages, Result.SUCCESS, null);
    }

    public CommStats(List<PathTotals> paths, Map<String, Map<String, Double>> shares, List<String> history,
                     Map<String, String> stages, Result asyncError, String errorDetail) {
        this(paths, shares, history, stages, asyncError, errorDetail, null);
    }

    /** A multi-node communicator's snapshot: the node-local part's, with the layout and the stage times. */
    public CommStats(List<PathTotals> paths, Map<String, Map<String, Double>> shares, List<String> history,
                     Map<String, String> stages, Result asyncError, String errorDetail, Hierarchy hierarchy) {
        this.hierarchy = hierarchy;
        this.paths = Collections.unmodifiableList(paths);
        this.shares = Collections.unmodifiableMap(shares);
        this.history = Collections.unmodifiableList(history);
        this.stages = Collections.unmodifiableMap(stages);
        this.asyncError = asyncError;
        this.errorDetail = errorDetail;
    }

    /** The layout and stage times when the communicator spans several nodes, else null. */
    public Hierarchy hierarchy() {
        return hierarchy;
    }

    /** The communicator's asynchronous error when the snapshot was taken, as {@code getAsyncError()} gave it. */
    public Result asyncError() {
        return asyncError;
    }

    /** What that error was (the stream, path or rank, or what the watchdog saw); null while there is none. */
    public String errorDetail() {
        return errorDetail;
    }

    /**
     * The balancer's stage per {@code collective/bucket}: {@code PROBE} and {@code COARSE} while tuning,
     * {@code FINE} once tuned (runtime adjustment), {@code PRIMARY_ONLY} where splitting does not pay.
     */
    public Map<String, String> stages() {
        return stages;
    }

    public List<PathTotals> paths() {
        return paths;
    }

    /** Share of each auxiliary path keyed by {@code collective/bucket} (for example {@code all_reduce/64M}). */
    public Map<String, Map<String, Double>> shares() {
        return shares;
    }

    /** The balancer's decisions, oldest first. */
    public List<String> history() {
        return history;
    }

    @Override
    public String toString() {
        return "CommStats" + paths + " shares=" + shares
                + (hierarchy == null ? "" : " " + hierarchy)
                + (asyncError == Result.SUCCESS ? "" : " error=" + asyncError + (errorDetail == null ? "" : ": " + errorDetail));
    }
}
