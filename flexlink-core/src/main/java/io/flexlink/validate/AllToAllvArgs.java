package io.flexlink.validate;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.runtime.Backend;
import java.util.Arrays;

/**
 * The argument rules of {@code allToAllv}, shared by the single-node and the multi-node communicator so
 * that both refuse the same calls with the same messages: one count and one displacement per rank, none
 * negative, byte offsets that fit 64 bits, buffers present where something moves, and no two pieces that
 * the call writes overlapping each other or a piece it reads (the pieces run at the same time, in no
 * defined order, as NCCL's grouped transfers do). Counts and displacements are elements.
 */
public final class AllToAllvArgs {
    private AllToAllvArgs() {
    }

    /** Everything that needs no backend; throws INVALID_ARGUMENT naming the argument. */
    public static void check(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                             long[] recvDispls, DataType type, int ranks) {
        lengths("sendcounts", sendCounts, ranks);
        lengths("sdispls", sendDispls, ranks);
        lengths("recvcounts", recvCounts, ranks);
        lengths("rdispls", recvDispls, ranks);
        if (type == null) {
            throw Validator.invalid("datatype: null");
        }
        int sz = type.size();
        boolean sends = ends("sendcounts", sendCounts, "sdispls", sendDispls, sz);
        boolean recvs = ends("recvcounts", recvCounts, "rdispls", recvDispls, sz);
        if (sends && send == 0) {
            throw Validator.invalid("sendbuff: null");
        }
        if (recvs && recv == 0) {
            throw Validator.invalid("recvbuff: null");
        }
        overlaps(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, sz);
    }

    /** After {@link #check}: each piece must be memory of {@code device} as far as the backend can tell. */
    public static void checkMemory(Backend backend, long send, long[] sendCounts, long[] sendDispls, long recv,
                                   long[] recvCounts, long[] recvDispls, DataType type, int device) {
        int sz = type.size();
        for (int j = 0; j < sendCounts.length; j++) {
            if (sendCounts[j] > 0) {
                String p = backend.accessProblem(send + sendDispls[j] * sz, sendCounts[j] * sz, device);
                if (p != null) {
                    throw Validator.invalid("sendbuff + sdispls[" + j + "]: " + p);
                }
            }
            if (recvCounts[j] > 0) {
                String p = backend.accessProblem(recv + recvDispls[j] * sz, recvCounts[j] * sz, device);
                if (p != null) {
                    throw Validator.invalid("recvbuff + rdispls[" + j + "]: " + p);
                }
            }
        }
    }

    private static void lengths(String name, long[] a, int ranks) {
        if (a == null) {
            throw Validator.invalid(name + ": null");
        }
        if (a.length != ranks) {
            throw Validator.invalid(name + ": " + a.length + " entries, one per rank (" + ranks + ") is needed");
        }
    }

    /** Checks signs and that every piece's last byte has a 64-bit offset; returns whether any piece is not empty. */
    private static boolean ends(String countName, long[] counts, String displName, long[] displs, int sz) {
        boolean any = false;
        for (int j = 0; j < counts.length; j++) {
            if (counts[j] < 0) {
                throw Validator.invalid(countName + "[" + j + "]: " + counts[j] + " is negative");
            }
            if (displs[j] < 0) {
                throw Validator.invalid(displName + "[" + j + "]: " + displs[j] + " is negative");
            }
            try {
                Math.multiplyExact(Math.addExact(displs[j], counts[j]), (long) sz);
            } catch (ArithmeticException e) {
                throw Validator.invalid(displName + "[" + j + "] + " + countName + "[" + j + "]: " + displs[j] + " + "
                        + counts[j] + " elements overflow a 64-bit byte offset");
            }
            any |= counts[j] > 0;
        }
        return any;
    }

    /**
     * The written pieces must not overlap one another nor any piece that is read: one sweep over the pieces
     * sorted by start ({@code n log n}; it allocates, as the arrays of the call's arguments do).
     */
    private static void overlaps(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                                 long[] recvDispls, int sz) {
        int n = sendCounts.length;
        long[][] pieces = new long[2 * n][];
        int k = 0;
        for (int j = 0; j < n; j++) {
            if (sendCounts[j] > 0) {
                pieces[k++] = new long[] {send + sendDispls[j] * sz, send + (sendDispls[j] + sendCounts[j]) * sz, 0, j};
            }
            if (recvCounts[j] > 0) {
                pieces[k++] = new long[] {recv + recvDispls[j] * sz, recv + (recvDispls[j] + recvCounts[j]) * sz, 1, j};
            }
        }
        long[][] sorted = Arrays.copyOf(pieces, k);
        Arrays.sort(sorted, (a, b) -> Long.compare(a[0], b[0]));
        // of the pieces started so far, the one reaching furthest, and the written one reaching furthest: a
        // written piece overlaps a piece before it iff it starts before the first's end, a read piece a
        // written one iff it starts before the second's end
        long[] reach = null;
        long[] reachWritten = null;
        for (long[] p : sorted) {
            long[] hit = p[2] == 1 ? reach : reachWritten;
            if (hit != null && p[0] < hit[1]) {
                long[] w = p[2] == 1 ? p : hit;
                long[] o = w == p ? hit : p;
                throw Validator.invalid("rdispls[" + w[3] + "]: recvbuff + rdispls[" + w[3] + "] ("
                        + recvCounts[(int) w[3]] + " elements) overlaps " + (o[2] == 1 ? "recvbuff + rdispls["
                        : "sendbuff + sdispls[") + o[3] + "]; no piece of one allToAllv may overlap a piece it writes");
            }
            if (reach == null || p[1] > reach[1]) {
                reach = p;
            }
            if (p[2] == 1 && (reachWritten == null || p[1] > reachWritten[1])) {
                reachWritten = p;
            }
        }
    }
}
