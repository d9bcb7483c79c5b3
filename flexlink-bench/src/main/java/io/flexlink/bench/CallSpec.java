package io.flexlink.bench;

import io.flexlink.DataType;

/** One row's call: the collective, its buffers' shape, type, operation and root, on a laid-out {@link Workspace}. */
final class CallSpec {
    final PerfCollective collective;
    final PerfCollective.Shape shape;
    final DataType type;
    final PerfOp op;
    /** The root of rooted collectives (0 for the others, where it is not used). */
    final int root;
    final Workspace ws;

    CallSpec(PerfCollective collective, PerfCollective.Shape shape, DataType type, PerfOp op, int root, Workspace ws) {
        this.collective = collective;
        this.shape = shape;
        this.type = type;
        this.op = op;
        this.root = Math.max(root, 0);
        this.ws = ws;
    }
}
