package io.flexlink.comm;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.Backend;

/**
 * Argument checks, run before anything is enqueued. Messages name the argument as NCCL's API does
 * ({@code sendbuff}, {@code recvbuff}, {@code count}, {@code datatype}, {@code op}, {@code root},
 * {@code stream}).
 */
final class Validator {
    private Validator() {
    }

    static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }

    /** Checks what the address overloads can check. */
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
        // send == recv is in place only at rank 0 for AllGather and ReduceScatter: elsewhere it is an overlap
        if (needSend && needRecv) {
            switch (c) {
                case ALL_GATHER:
                    checkAliasing(send, perRank, recv, total, recv + rank * perRank, "sendbuff", "recvbuff + rank * count");
                    break;
                case REDUCE_SCATTER:
                    checkAliasing(recv, perRank, send, total, send + rank * perRank, "recvbuff", "sendbuff + rank * count");
                    break;
                default:
                    checkAliasing(send, perRank, recv, perRank, recv, "sendbuff", "recvbuff");
            }
        }
    }

    /**
     * After {@link #checkCall}: the bytes the call reads and writes must be memory of the communicator's
     * device as far as {@code backend} can tell ({@link Backend#accessProblem}: the host backend knows its
     * live allocations; CUDA reports a bad address itself). Two lookups, no allocation.
     */
    static void checkMemory(Backend backend, Collective c, long send, long recv, long count, DataType type, int root,
                            int rank, int size, int device) {
        if (count == 0) {
            return;
        }
        long perRank = count * type.size(); // checkCall ruled out an overflow
        boolean needSend = c != Collective.BROADCAST || rank == root;
        boolean needRecv = c != Collective.REDUCE || rank == root;
        if (needSend) {
            String p = backend.accessProblem(send, c == Collective.REDUCE_SCATTER ? perRank * size : perRank, device);
            if (p != null) {
                throw invalid("sendbuff: " + p);
            }
        }
        if (needRecv) {
            String p = backend.accessProblem(recv, c == Collective.ALL_GATHER ? perRank * size : perRank, device);
            if (p != null) {
                throw invalid("recvbuff: " + p);
            }
        }
    }

    /** Rejects a partial overlap: {@code small} must be disjoint from {@code big} or exactly at {@code inPlace}. */
    private static void checkAliasing(long small, long smallBytes, long big, long bigBytes, long inPlace,
                                      String smallName, String inPlaceName) {
        boolean overlap = small < big + bigBytes && big < small + smallBytes;
        if (overlap && small != inPlace) {
            throw invalid(smallName + ": overlaps the other buffer but is not at the in-place position ("
                    + inPlaceName + ")");
        }
    }

    /** Checks buffer sizes and devices (the {@link Buffer} overloads). */
    static void checkBuffers(Collective c, Buffer send, Buffer recv, long count, DataType type, int root, int rank,
                             int size, int device) {
        if (type == null || count < 0) {
            return; // checkCall reports these
        }
        long perRank = count * type.size();
        long total = perRank * size;
        boolean needSend = c != Collective.BROADCAST || rank == root;
        boolean needRecv = c != Collective.REDUCE || rank == root;
        long sendNeeds = c == Collective.REDUCE_SCATTER ? total : perRank;
        long recvNeeds = c == Collective.ALL_GATHER ? total : perRank;
        if (needSend) {
            checkBuffer("sendbuff", send, sendNeeds, count, device);
        }
        if (needRecv) {
            checkBuffer("recvbuff", recv, recvNeeds, count, device);
        }
    }

    private static void checkBuffer(String name, Buffer b, long needed, long count, int device) {
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
