package io.flexlink.cuda;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PrimaryComm;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CallLoop;
import java.util.Locale;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclComm;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * Where an 8-byte AllReduce of one rank gains host time between raw NCCL and FlexLink: the same in-place call
 * (same buffer, same stream) timed layer by layer, in turns, in one JVM, so that order, JIT and clock effects
 * show as differences between the turns rather than between the layers. Layers: raw bytedeco calls on an
 * {@code ncclCommInitAll} communicator of its own; raw calls on the NCCL communicator FlexLink's transport
 * made; FlexLink's {@code NcclComm.allReduce} (the primary path's layer); the public {@code Communicator}.
 * Usage: {@code EightByteLayers secondsPerTurn turns}. A synchronize every 1000 calls. Each turn starts at the
 * next layer; the last lines give each layer's median over the turns and the median of the turns' differences.
 */
public final class EightByteLayers {
    private EightByteLayers() {
    }

    public static void main(String[] args) {
        double seconds = Double.parseDouble(args[0]);
        int turns = Integer.parseInt(args[1]);
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment())) {
            RuntimeStream s = backend.createStream(0, "loop");
            CudaStream cs = (CudaStream) s;
            DeviceMemory buf = backend.allocate(0, 8);
            long a = buf.address();
            Pointer p = new Pointer() {
                {
                    address = a;
                }
            };
            PointerPointer<?> handles = new PointerPointer<>(1);
            check(nccl.ncclCommInitAll(handles, 1, new int[] {0}), "ncclCommInitAll");
            ncclComm rawComm = new ncclComm(handles.get(0));
            PrimaryComm primary = backend.primaryTransport().createAll(new int[] {0})[0];
            ncclComm primaryHandle = ((NcclComm) primary).handle();
            Communicator comm = FlexLink.initAll(backend, FlexLinkConfig.fromEnvironment(), 0)[0];
            String[] names = {"raw comm, raw call", "transport's comm, raw call", "NcclComm.allReduce",
                "Communicator.allReduce"};
            Runnable[] loops = {
                () -> check(nccl.ncclAllReduce(p, p, 2, nccl.ncclFloat, nccl.ncclSum, rawComm, cs.handle()), "raw"),
                () -> check(nccl.ncclAllReduce(p, p, 2, nccl.ncclFloat, nccl.ncclSum, primaryHandle, cs.handle()), "raw"),
                () -> primary.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM, s),
                () -> comm.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM, s),
            };
            System.out.println("# us per 8-byte in-place AllReduce call, 1 rank, turns of " + seconds + " s");
            double[][] us = new double[loops.length][turns];
            for (int t = 0; t < turns; t++) {
                StringBuilder line = new StringBuilder("turn " + t + ":");
                // each turn starts at another layer, so that no layer always runs first or after the same one
                for (int k = 0; k < loops.length; k++) {
                    int l = (t + k) % loops.length;
                    us[l][t] = CallLoop.run(loops[l], s, seconds).microsPerCall();
                }
                for (int l = 0; l < loops.length; l++) {
                    line.append(String.format(Locale.ROOT, "  %s %.3f", names[l], us[l][t]));
                }
                System.out.println(line);
            }
            StringBuilder summary = new StringBuilder("median of " + turns + " turns:");
            for (int l = 0; l < loops.length; l++) {
                summary.append(String.format(Locale.ROOT, "  %s %.3f", names[l], median(us[l])));
            }
            System.out.println(summary);
            double[] gap = new double[turns];
            double[] gapRaw = new double[turns];
            for (int t = 0; t < turns; t++) {
                gap[t] = us[3][t] - us[1][t];
                gapRaw[t] = us[3][t] - us[0][t];
            }
            System.out.printf(Locale.ROOT, "Communicator.allReduce minus raw calls, median of the turns' differences: "
                    + "%+.3f us (transport's comm), %+.3f us (raw comm)%n", median(gap), median(gapRaw));
            comm.close();
            primary.close();
            nccl.ncclCommDestroy(rawComm);
            buf.close();
            s.close();
        }
    }

    private static double median(double[] v) {
        double[] sorted = v.clone();
        java.util.Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + ": " + rc);
        }
    }
}
