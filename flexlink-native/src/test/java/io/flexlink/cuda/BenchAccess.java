package io.flexlink.cuda;

import io.flexlink.DataType;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import java.util.Arrays;

/** Package-private knobs and measurements for {@code io.flexlink.cuda.bench.CudaMeasurements}. */
public final class BenchAccess {
    private BenchAccess() {
    }

    /** The staged/fused threshold of reduceFromHost (0: always staged; Long.MAX_VALUE: always fused). */
    public static void stagedMinBytes(long bytes) {
        CudaStream.stagedMinBytes = bytes;
    }

    public static void stridedByRoots(boolean byRoots) {
        NcclComm.stridedDefault = byRoots;
    }

    /**
     * Median milliseconds of a 1-rank strided primary AllGather ({@code count} elements of fp32 into
     * blocks {@code stride} apart) with NcclComm's variant {@code byRoots}.
     */
    public static double stridedAllGatherMillis(CudaBackend backend, long count, long stride, boolean byRoots, int reps) {
        NcclComm.stridedDefault = byRoots;
        PrimaryComm comm = backend.primaryTransport().createAll(new int[] {0})[0];
        NcclComm.stridedDefault = NcclComm.STRIDED_BY_ROOTS;
        RuntimeStream s = backend.createStream(0, "bench.strided");
        RuntimeEvent a = backend.createEvent(0, true);
        RuntimeEvent b = backend.createEvent(0, true);
        double[] t = new double[reps];
        try (DeviceMemory send = backend.allocate(0, count * 4); DeviceMemory recv = backend.allocate(0, stride * 4)) {
            for (int i = -3; i < reps; i++) {
                s.record(a);
                comm.allGather(send.address(), recv.address(), count, stride, DataType.FLOAT32, s);
                s.record(b);
                b.synchronize();
                if (i >= 0) {
                    t[i] = b.elapsedMillis(a);
                }
            }
        } finally {
            s.close();
            a.close();
            b.close();
            comm.close();
        }
        Arrays.sort(t);
        return t[reps / 2];
    }
}
