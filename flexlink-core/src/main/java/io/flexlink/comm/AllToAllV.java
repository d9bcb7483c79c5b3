package io.flexlink.comm;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.launch.Groups;

/** AlltoAllv as one group of sends and receives ({@link Communicator#allToAllv}). */
final class AllToAllV {
    private AllToAllV() {
    }

    static void run(Communicator c, long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                    long[] recvDispls, DataType type, Stream stream) {
        int n = c.size();
        check("sendCounts", sendCounts, n);
        check("sendDispls", sendDispls, n);
        check("recvCounts", recvCounts, n);
        check("recvDispls", recvDispls, n);
        if (type == null) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "datatype: null");
        }
        long sz = type.size();
        Groups.start();
        try {
            for (int j = 0; j < n; j++) {
                if (sendCounts[j] > 0) {
                    c.send(send + sendDispls[j] * sz, sendCounts[j], type, j, stream);
                }
                if (recvCounts[j] > 0) {
                    c.recv(recv + recvDispls[j] * sz, recvCounts[j], type, j, stream);
                }
            }
        } finally {
            Groups.end();
        }
    }

    private static void check(String name, long[] a, int n) {
        if (a == null || a.length != n) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, name + ": " + (a == null ? "null" : a.length
                    + " entries") + ", one per rank (" + n + ") is needed");
        }
        for (int j = 0; j < n; j++) {
            if (a[j] < 0) {
                throw new FlexLinkException(Result.INVALID_ARGUMENT, name + "[" + j + "]: " + a[j] + " is negative");
            }
        }
    }
}
