package io.flexlink.runtime.host;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.PinnedMemory;

/**
 * The checks of a host stream operation's arguments, made when it is enqueued: pinned memory of this
 * backend, still open, with the range inside it; counters 4-byte aligned; reductions with a type, an
 * operation, a divisor for AVG and a byte count that does not overflow. Device addresses are checked
 * against the backend's live allocations ({@link HostBackend#checkAccess}). A bad argument is
 * INVALID_ARGUMENT naming the operation and the argument, and nothing is enqueued.
 */
final class StreamArguments {
    private StreamArguments() {
    }

    private static FlexLinkException invalid(String message) {
        return new FlexLinkException(Result.INVALID_ARGUMENT, message);
    }

    /** Host memory of this backend, with {@code [offset, offset + bytes)} inside it. */
    static HostPinnedMemory within(HostBackend backend, String what, PinnedMemory mem, long offset, long bytes) {
        if (!(mem instanceof HostPinnedMemory) || ((HostPinnedMemory) mem).backend() != backend) {
            throw invalid(what + ": " + mem + " is not pinned memory of this host backend");
        }
        if (offset < 0 || bytes < 0 || offset > mem.byteSize() - bytes) {
            throw invalid(what + ": [" + offset + ", +" + bytes + ") is outside " + mem.byteSize() + " bytes of " + mem);
        }
        if (!backend.isLive((HostPinnedMemory) mem)) {
            throw invalid(what + ": " + mem + " was closed");
        }
        return (HostPinnedMemory) mem;
    }

    /** A 4-byte aligned counter inside {@code mem}. */
    static HostPinnedMemory counter(HostBackend backend, String what, PinnedMemory mem, long offset) {
        HostPinnedMemory m = within(backend, what, mem, offset, 4);
        if ((offset & 3) != 0) {
            throw invalid(what + ": offset " + offset + " is not 4-byte aligned");
        }
        return m;
    }

    /** The bytes of one operand of a reduction; its arguments checked. */
    static long reduceBytes(String what, long count, DataType type, ReduceOp op, int divisor) {
        if (type == null || op == null) {
            throw invalid(what + ": " + (type == null ? "datatype" : "op") + ": null");
        }
        if (op == ReduceOp.AVG && divisor == 0) {
            throw invalid(what + ": divisor: 0 for AVG");
        }
        if (count < 0 || count > Long.MAX_VALUE / type.size()) {
            throw invalid(what + ": count: " + count + " elements of " + type + " is negative or overflows");
        }
        return count * type.size();
    }
}
