package io.flexlink.runtime;

/**
 * AlltoAll, Gather and Scatter as one rank's transfers between pairs ({@link PeerOps}), block {@code j} of a
 * blocked buffer at {@code base + j * stride} elements: what a transport that has only point-to-point
 * transfers runs for them (the host ring, NCCL for a strided slice).
 */
public final class BlockTransfers {
    private BlockTransfers() {
    }

    /** Block {@code j} of {@code send} to rank {@code j}; rank {@code p}'s block {@code rank} to block {@code p} of {@code recv}. */
    public static PeerOps allToAll(PeerOps ops, int size, long send, long recv, long count, long stride, int sz) {
        ops.clear();
        for (int j = 0; j < size; j++) {
            ops.add(true, j, send + j * stride * sz, count * sz);
            ops.add(false, j, recv + j * stride * sz, count * sz);
        }
        return ops;
    }

    /** Every rank's {@code send} to the root, into block {@code p} of the root's {@code recv}. */
    public static PeerOps gather(PeerOps ops, int rank, int size, int root, long send, long recv, long count,
                                 long stride, int sz) {
        ops.clear();
        ops.add(true, root, send, count * sz);
        if (rank == root) {
            for (int p = 0; p < size; p++) {
                ops.add(false, p, recv + p * stride * sz, count * sz);
            }
        }
        return ops;
    }

    /** Block {@code j} of the root's {@code send} to rank {@code j}'s {@code recv}. */
    public static PeerOps scatter(PeerOps ops, int rank, int size, int root, long send, long recv, long count,
                                  long stride, int sz) {
        ops.clear();
        if (rank == root) {
            for (int j = 0; j < size; j++) {
                ops.add(true, j, send + j * stride * sz, count * sz);
            }
        }
        ops.add(false, root, recv, count * sz);
        return ops;
    }
}
