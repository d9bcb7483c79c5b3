package io.flexlink.hier;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;

/**
 * NCCL's argument rules for a hierarchical call, checked before any stage is enqueued: a stage that
 * failed after an earlier one was enqueued would leave the peers waiting for the rest. The same rules
 * and messages as a single-node communicator's (they name the argument as NCCL's API does).
 */
final class HierChecks {
    private HierChecks() {
    }

    static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }

    /** What the address overloads can check. */
    static void checkCall(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
                          int rank, int size) {
        if (type == null) {
            throw invalid("datatype: null");
        }
        if (c.reduces() && op == null) {
            throw invalid("op: null");
        }
        if (count < 0) {
            throw invalid("count: " + count + " is negative");
        }
        boolean rooted = c == Collective.BROADCAST || c == Collective.REDUCE;
        if (rooted && (root < 0 || root >= size)) {
            throw invalid("root: " + root + " is not a rank of this communicator (size " + size + ")");
        }
        long perRank;
        long total;
        try {
            perRank = Math.multiplyExact(count, type.size());
            total = Math.multiplyExact(perRank, size);
        } catch (ArithmeticException e) {
            throw invalid("count: " + count + " elements of " + type + " overflow a 64-bit byte count");
        }
        if (count == 0) {
            return;
        }
        boolean needSend = c != Collective.BROADCAST || rank == root;
        boolean needRecv = c != Collective.REDUCE || rank == root;
        if (needSend && send == 0) {
            throw invalid("sendbuff: null");
        }
        if (needRecv && recv == 0) {
            throw invalid("recvbuff: null");
        }
        if (needSend && needRecv) {
            switch (c) {
                case ALL_GATHER:
                    aliasing(send, perRank, recv, total, recv + rank * perRank, "sendbuff", "recvbuff + rank * count");
                    break;
                case REDUCE_SCATTER:
                    aliasing(recv, perRank, send, total, send + rank * perRank, "recvbuff", "sendbuff + rank * count");
                    break;
                default:
                    aliasing(send, perRank, recv, perRank, recv, "sendbuff", "recvbuff");
            }
        }
    }

    /** Rejects a partial overlap: {@code small} must be disjoint from {@code big} or exactly at {@code inPlace}. */
    private static void aliasing(long small, long smallBytes, long big, long bigBytes, long inPlace, String smallName,
                                 String inPlaceName) {
        boolean overlap = small < big + bigBytes && big < small + smallBytes;
        if (overlap && small != inPlace) {
            throw invalid(smallName + ": overlaps the other buffer but is not at the in-place position ("
                    + inPlaceName + ")");
        }
    }

    /** Buffer sizes and devices (the {@link Buffer} overloads). */
    static void checkBuffers(Collective c, Buffer send, Buffer recv, long count, DataType type, int root, int rank,
                             int size, int device) {
        if (type == null || count < 0) {
            return; // checkCall reports these
        }
        long perRank;
        long total;
        try {
            perRank = Math.multiplyExact(count, type.size());
            total = Math.multiplyExact(perRank, size);
        } catch (ArithmeticException e) {
            return; // checkCall reports it
        }
        boolean needSend = c != Collective.BROADCAST || rank == root;
        boolean needRecv = c != Collective.REDUCE || rank == root;
        if (needSend) {
            buffer("sendbuff", send, c == Collective.REDUCE_SCATTER ? total : perRank, count, device);
        }
        if (needRecv) {
            buffer("recvbuff", recv, c == Collective.ALL_GATHER ? total : perRank, count, device);
        }
    }

    private static void buffer(String name, Buffer b, long needed, long count, int device) {
        if (b == null) {
            if (count > 0) {
                throw invalid(name + ": null");
            }
            return;
        }
        if (b.byteSize() < needed) {
            throw invalid(name + ": " + b.byteSize() + " bytes, but count " + count + " needs " + needed);
        }
        if (b.device() != device) {
            throw invalid(name + ": lives on device " + b.device() + ", the communicator's device is " + device);
        }
    }

    static long address(Buffer b) {
        return b == null ? 0 : b.address();
    }
}
