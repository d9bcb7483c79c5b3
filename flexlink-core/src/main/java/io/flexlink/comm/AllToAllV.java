package io.flexlink.comm;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Stream;
import io.flexlink.launch.Groups;
import io.flexlink.validate.AllToAllvArgs;

/** AlltoAllv as one group of sends and receives ({@link Communicator#allToAllv}). */
final class AllToAllV {
    private AllToAllV() {
    }

    static void run(Communicator c, AllToAllvArgs args, long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                    long[] recvDispls, DataType type, Stream stream) {
        try {
            args.check(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, c.size());
        } catch (FlexLinkException e) {
            Groups.current().fail(e); // inside the caller's group: NCCL's groups are atomic
            throw e;
        }
        int n = c.size();
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
}
