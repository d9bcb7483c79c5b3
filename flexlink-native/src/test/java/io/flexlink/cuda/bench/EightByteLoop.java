package io.flexlink.cuda.bench;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.cuda.CudaBackend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CallLoop;

/**
 * A long loop of 8-byte AllReduce calls on one rank (synchronized every 1000), for a profiler (JFR) to
 * sample where FlexLink's host time per call goes ({@link StackSampler}).
 * Usage: {@code EightByteLoop seconds [nosample|raw]} ({@code nosample}: no stack sampler, for JFR alone; the
 * sampler's handshakes with the calling thread cost it time of their own; {@code raw}: the same loop of raw
 * bytedeco {@code ncclAllReduce} calls on an NCCL communicator of its own, no sampler, for the ratio).
 */
public final class EightByteLoop {
    private EightByteLoop() {
    }

    public static void main(String[] args) {
        long seconds = Long.parseLong(args[0]);
        try (CudaBackend backend = CudaBackend.open(FlexLinkConfig.fromEnvironment())) {
            Communicator comm = FlexLink.initAll(backend, FlexLinkConfig.fromEnvironment(), 0)[0];
            RuntimeStream s = backend.createStream(0, "loop");
            DeviceMemory buf = backend.allocate(0, 8);
            long a = buf.address();
            if (args.length > 1 && args[1].equals("raw")) {
                raw(seconds, a, (io.flexlink.cuda.CudaStream) s);
            }
            StackSampler sampler = args.length > 1 ? null
                    : new StackSampler(Thread.currentThread(), "");
            CallLoop.Timing t = CallLoop.run(() -> comm.allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM, s), s,
                    seconds);
            System.out.printf("%d calls, %.3f us per call (with a synchronize every 1000)%n", t.calls(),
                    t.microsPerCall());
            if (sampler != null) {
                sampler.close();
            }
            comm.close();
            buf.close();
            s.close();
        }
    }

    /** The loop of raw {@code ncclAllReduce} calls, on the same buffer and stream. */
    private static void raw(long seconds, long a, io.flexlink.cuda.CudaStream s) {
        org.bytedeco.javacpp.PointerPointer<?> handles = new org.bytedeco.javacpp.PointerPointer<>(1);
        if (org.bytedeco.cuda.global.nccl.ncclCommInitAll(handles, 1, new int[] {0}) != 0) {
            throw new IllegalStateException("ncclCommInitAll");
        }
        org.bytedeco.cuda.nccl.ncclComm comm = new org.bytedeco.cuda.nccl.ncclComm(handles.get(0));
        org.bytedeco.javacpp.Pointer p = new org.bytedeco.javacpp.Pointer() {
            {
                address = a;
            }
        };
        CallLoop.Timing t = CallLoop.run(() -> org.bytedeco.cuda.global.nccl.ncclAllReduce(p, p, 2,
                org.bytedeco.cuda.global.nccl.ncclFloat, org.bytedeco.cuda.global.nccl.ncclSum, comm, s.handle()), s,
                seconds);
        System.out.printf("raw NCCL: %d calls, %.3f us per call (with a synchronize every 1000)%n", t.calls(),
                t.microsPerCall());
        org.bytedeco.cuda.global.nccl.ncclCommDestroy(comm);
    }
}
