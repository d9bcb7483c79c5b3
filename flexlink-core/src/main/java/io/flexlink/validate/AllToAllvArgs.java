package io.flexlink.validate;

import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.runtime.Backend;

/**
 * The argument rules of {@code allToAllv}, shared by the single-node and the multi-node communicator so
 * that both refuse the same calls with the same messages: one count and one displacement per rank, none
 * negative, byte offsets that fit 64 bits, buffers present where something moves, and no two pieces that
 * the call writes overlapping each other or a piece it reads (the pieces run at the same time, in no
 * defined order, as NCCL's grouped transfers do). Counts and displacements are elements. One instance
 * per communicator: it keeps the arrays of the overlap check from call to call.
 */
public final class AllToAllvArgs {
    /** Per piece (2j: the send to j, 2j + 1: the receive from j): first and end byte; the pieces by start. */
    private long[] starts = new long[0];
    private long[] ends = new long[0];
    private int[] order = new int[0];

    /** Everything that needs no backend; throws INVALID_ARGUMENT naming the argument. Safe from any thread. */
    public void check(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                             long[] recvDispls, DataType type, int ranks) {
        lengths("sendcounts", sendCounts, ranks);
        lengths("sdispls", sendDispls, ranks);
        lengths("recvcounts", recvCounts, ranks);
        lengths("rdispls", recvDispls, ranks);
        if (type == null) {
            throw Validator.invalid("datatype: null");
        }
        int sz = type.size();
        boolean sends = checkRanges("sendcounts", sendCounts, "sdispls", sendDispls, sz);
        boolean recvs = checkRanges("recvcounts", recvCounts, "rdispls", recvDispls, sz);
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
    private static boolean checkRanges(String countName, long[] counts, String displName, long[] displs, int sz) {
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
     * sorted by start. Reuses this instance's arrays, so that a steady state of calls allocates nothing.
     */
    private synchronized void overlaps(long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                                       long[] recvDispls, int sz) {
        int n = sendCounts.length;
        if (starts.length < 2 * n) {
            starts = new long[2 * n];
            ends = new long[2 * n];
            order = new int[2 * n];
        }
        int k = 0;
        for (int j = 0; j < n; j++) { // piece 2j is the send to j, 2j + 1 the receive from j
            if (sendCounts[j] > 0) {
                starts[2 * j] = send + sendDispls[j] * sz;
                ends[2 * j] = starts[2 * j] + sendCounts[j] * sz;
                order[k++] = 2 * j;
            }
            if (recvCounts[j] > 0) {
                starts[2 * j + 1] = recv + recvDispls[j] * sz;
                ends[2 * j + 1] = starts[2 * j + 1] + recvCounts[j] * sz;
                order[k++] = 2 * j + 1;
            }
        }
        sortByStart(k);
        // of the pieces started so far, the one reaching furthest, and the written one reaching furthest: a
        // written piece overlaps a piece before it iff it starts before the first's end, a read piece a
        // written one iff it starts before the second's end
        int reach = -1;
        int reachWritten = -1;
        for (int i = 0; i < k; i++) {
            int p = order[i];
            boolean written = (p & 1) == 1;
            int hit = written ? reach : reachWritten;
            if (hit >= 0 && starts[p] < ends[hit]) {
                int w = written ? p : hit;
                int o = w == p ? hit : p;
                throw Validator.invalid("rdispls[" + (w >> 1) + "]: recvbuff + rdispls[" + (w >> 1) + "] ("
                        + recvCounts[w >> 1] + " elements) overlaps " + ((o & 1) == 1 ? "recvbuff + rdispls["
                        : "sendbuff + sdispls[") + (o >> 1) + "]; no piece of one allToAllv may overlap a piece it "
                        + "writes");
            }
            if (reach < 0 || ends[p] > ends[reach]) {
                reach = p;
            }
            if (written && (reachWritten < 0 || ends[p] > ends[reachWritten])) {
                reachWritten = p;
            }
        }
    }

    /** Insertion sort of {@code order[0, k)} by start, ties by piece number: pieces usually come nearly in order. */
    private void sortByStart(int k) {
        for (int i = 1; i < k; i++) {
            int p = order[i];
            int j = i - 1;
            while (j >= 0 && (starts[order[j]] > starts[p] || (starts[order[j]] == starts[p] && order[j] > p))) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = p;
        }
    }
}
