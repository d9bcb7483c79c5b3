package io.flexlink.validate;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.RuntimeStream;
import java.util.Arrays;

/**
 * Argument checks, run before anything is enqueued. Messages name the argument as NCCL's API does
 * ({@code sendbuff}, {@code recvbuff}, {@code count}, {@code datatype}, {@code op}, {@code root},
 * {@code stream}).
 */
public final class Validator {
    private Validator() {
    }

    public static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }

    /** Checks what the address overloads can check. For Send and Recv {@code root} is the peer. */
    public static void checkCall(Collective c, long send, long recv, long count, DataType type, ReduceOp op, int root,
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
        if (c.rooted() && (root < 0 || root >= size)) {
            throw invalid((c.pointToPoint() ? "peer: " : "root: ") + root + " is not a rank of this communicator (size "
                    + size + ")");
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
        boolean needSend = needsSend(c, rank, root);
        boolean needRecv = needsRecv(c, rank, root);
        if (needSend && send == 0) {
            throw invalid((c == Collective.SEND ? "buff" : "sendbuff") + ": null");
        }
        if (needRecv && recv == 0) {
            throw invalid((c == Collective.RECV ? "buff" : "recvbuff") + ": null");
        }
        // send == recv is in place only at the rank's block for the blocked collectives: elsewhere an overlap
        if (needSend && needRecv) {
            switch (c) {
                case ALL_GATHER:
                case GATHER:
                    checkAliasing(send, perRank, recv, total, recv + rank * perRank, "sendbuff", "recvbuff + rank * count");
                    break;
                case REDUCE_SCATTER:
                case SCATTER:
                    checkAliasing(recv, perRank, send, total, send + rank * perRank, "recvbuff", "sendbuff + rank * count");
                    break;
                case ALL_TO_ALL:
                    checkAliasing(send, total, recv, total, recv, "sendbuff", "recvbuff");
                    break;
                default:
                    checkAliasing(send, perRank, recv, perRank, recv, "sendbuff", "recvbuff");
            }
        }
    }

    /** True when rank {@code rank} reads its send buffer in {@code c} (Broadcast and Scatter: the root only). */
    public static boolean needsSend(Collective c, int rank, int root) {
        switch (c) {
            case BROADCAST:
            case SCATTER: return rank == root;
            case RECV: return false;
            default: return true;
        }
    }

    /** True when rank {@code rank} writes its receive buffer in {@code c} (Reduce and Gather: the root only). */
    public static boolean needsRecv(Collective c, int rank, int root) {
        switch (c) {
            case REDUCE:
            case GATHER: return rank == root;
            case SEND: return false;
            default: return true;
        }
    }

    /** The bytes {@code c} reads from the send buffer: one block, or one per rank where it sends to each. */
    private static long sendBytes(Collective c, long perRank, long total) {
        return c == Collective.REDUCE_SCATTER || c == Collective.ALL_TO_ALL || c == Collective.SCATTER ? total : perRank;
    }

    /** The bytes {@code c} writes to the receive buffer. */
    private static long recvBytes(Collective c, long perRank, long total) {
        return c == Collective.ALL_GATHER || c == Collective.ALL_TO_ALL || c == Collective.GATHER ? total : perRank;
    }

    /**
     * After {@link #checkCall}: the bytes the call reads and writes must be memory of the communicator's
     * device as far as {@code backend} can tell ({@link Backend#accessProblem}: the host backend knows its
     * live allocations; CUDA reports a bad address itself). Two lookups, no allocation.
     */
    public static void checkMemory(Backend backend, Collective c, long send, long recv, long count, DataType type,
                                   int root, int rank, int size, int device) {
        if (count == 0) {
            return;
        }
        long perRank = count * type.size(); // checkCall ruled out an overflow
        long total = perRank * size;
        if (needsSend(c, rank, root)) {
            String p = backend.accessProblem(send, sendBytes(c, perRank, total), device);
            if (p != null) {
                throw invalid((c == Collective.SEND ? "buff: " : "sendbuff: ") + p);
            }
        }
        if (needsRecv(c, rank, root)) {
            String p = backend.accessProblem(recv, recvBytes(c, perRank, total), device);
            if (p != null) {
                throw invalid((c == Collective.RECV ? "buff: " : "recvbuff: ") + p);
            }
        }
    }

    /**
     * A range to register ({@code Communicator.register}): not NULL, a positive size, not past the end of the
     * address space; then, where the backend can tell, memory of {@code device} (the host backend refuses what
     * is not one of its live allocations; CUDA leaves it to NCCL).
     */
    public static void checkRegistration(Backend backend, long address, long bytes, int device) {
        if (address == 0) {
            throw invalid("address: NULL");
        }
        if (bytes <= 0) {
            throw invalid("bytes: must be positive, got " + bytes);
        }
        if (Long.compareUnsigned(address + bytes, address) < 0) {
            throw invalid("bytes: " + bytes + " from 0x" + Long.toHexString(address) + " runs past the address space");
        }
        String p = backend.accessProblem(address, bytes, device);
        if (p != null) {
            throw invalid("address: " + p);
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
    public static void checkBuffers(Collective c, Buffer send, Buffer recv, long count, DataType type, int root,
                                    int rank, int size, int device) {
        if (type == null || count < 0) {
            return; // checkCall reports these
        }
        long perRank = count * type.size();
        long total = perRank * size;
        long sendNeeds = sendBytes(c, perRank, total);
        long recvNeeds = recvBytes(c, perRank, total);
        if (needsSend(c, rank, root)) {
            checkBuffer(c == Collective.SEND ? "buff" : "sendbuff", send, sendNeeds, count, device);
        }
        if (needsRecv(c, rank, root)) {
            checkBuffer(c == Collective.RECV ? "buff" : "recvbuff", recv, recvNeeds, count, device);
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

    /** The backend's stream of {@code userStream}, which must be on {@code device}. */
    public static RuntimeStream checkStream(Backend backend, Stream userStream, int device) {
        if (userStream == null) {
            throw invalid("stream: null");
        }
        RuntimeStream stream = backend.runtimeStream(userStream);
        if (stream.device() != device) {
            throw invalid("stream: belongs to device " + stream.device() + ", the communicator's device is " + device);
        }
        return stream;
    }

    public static long address(Buffer b) {
        return b == null ? 0 : b.address();
    }

    /** {@code excluded} sorted, or INVALID_ARGUMENT naming it: NCCL's checks (a list, not empty) and ranges. */
    public static int[] checkExcluded(int[] excluded, int size) {
        if (excluded == null || excluded.length == 0) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "excluded: " + (excluded == null ? "null"
                    : "empty") + "; name at least one rank to leave out (split copies every rank)");
        }
        int[] sorted = excluded.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 0 || sorted[i] >= size) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "excluded: rank " + sorted[i] + " is not in [0, "
                        + size + ")");
            }
            if (i > 0 && sorted[i] == sorted[i - 1]) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, "excluded: rank " + sorted[i] + " twice");
            }
        }
        if (sorted.length == size) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "excluded: every rank of " + size
                    + "; a shrink keeps at least one");
        }
        return sorted;
    }
}
