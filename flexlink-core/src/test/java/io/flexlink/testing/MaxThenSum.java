package io.flexlink.testing;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * Two dependent collectives of each communicator in one group, on any backend: an in-place AllReduce MAX of each
 * rank's buffer on its first stream, then an in-place AllReduce SUM of the same buffer on its second stream (the
 * same stream or another); right only if the SUM reads the MAX's results. Seeded int32 data, every element checked.
 */
public final class MaxThenSum {
    private MaxThenSum() {
    }

    /**
     * Fills {@code buf} (one per rank, {@code n} int32 each) with seeded data, runs the group and returns the wrong
     * elements of all ranks, read after synchronizing the first streams only (which the group must hold to its end).
     */
    public static long run(Backend backend, Communicator[] comms, RuntimeStream[] first, RuntimeStream[] second,
                           DeviceMemory[] buf, int n, long seed) {
        int ranks = comms.length;
        ByteBuffer[] in = new ByteBuffer[ranks];
        SplittableRandom random = new SplittableRandom(seed);
        for (int r = 0; r < ranks; r++) {
            in[r] = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.nativeOrder());
            for (int i = 0; i < n; i++) {
                in[r].putInt(4 * i, random.nextInt(1 << 24) - (1 << 23));
            }
            backend.upload(buf[r].address(), in[r]);
        }
        FlexLink.groupStart();
        try {
            for (int r = 0; r < ranks; r++) {
                comms[r].allReduce(buf[r].address(), buf[r].address(), n, DataType.INT32, ReduceOp.MAX, first[r]);
            }
            for (int r = 0; r < ranks; r++) {
                comms[r].allReduce(buf[r].address(), buf[r].address(), n, DataType.INT32, ReduceOp.SUM, second[r]);
            }
        } finally {
            FlexLink.groupEnd();
        }
        long wrong = 0;
        ByteBuffer got = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.nativeOrder());
        for (int r = 0; r < ranks; r++) {
            first[r].synchronize();
            backend.download(got, buf[r].address());
            for (int i = 0; i < n; i++) {
                int max = Integer.MIN_VALUE;
                for (ByteBuffer b : in) {
                    max = Math.max(max, b.getInt(4 * i));
                }
                wrong += got.getInt(4 * i) == ranks * max ? 0 : 1;
            }
        }
        return wrong;
    }
}
