package io.flexlink.ddp;

import static io.flexlink.runtime.NativeMemory.UNSAFE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Buffer;
import io.flexlink.CommStats;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.runtime.ForwardingBackend;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A steady-state step of the buckets (ready for every gradient, then finish) allocates nothing on the Java
 * heap. The buckets run against a backend whose streams and events only count what is enqueued and a
 * one-rank communicator that does nothing, so that only the buckets' own allocations are measured (the
 * host backend's streams allocate an operation object per enqueue; the CUDA backend's allocate nothing).
 */
class SteadyStateAllocationTest {
    static final int STEPS = 2000;

    @Test
    void aStepAllocatesNothing() {
        try (HostBackend host = new HostBackend(DdpRig.CONFIG); CountingBackend backend = new CountingBackend(host)) {
            Communicator comm = new InertCommunicator();
            int[] counts = {300, 20, 4000, 64, 1000, 7};
            try (DdpRig.Gradients g = new DdpRig.Gradients(host, 0, counts, false)) {
                GradientBucketsBuilder b = GradientBuckets.builder(comm, backend).config(DdpRig.CONFIG)
                        .firstBucketCap(1024).bucketCap(4096).reduction(ReduceOp.SUM, 0.25).findUnusedParameters(true);
                List<Parameter> params = new ArrayList<>();
                for (int p = 0; p < counts.length; p++) {
                    params.add(b.register(Buffer.wrap(g.address[p], 4L * counts[p], 0), counts[p], DataType.FLOAT32));
                }
                Stream compute = backend.createStream(0, "compute");
                try (GradientBuckets buckets = b.build()) {
                    Runnable step = () -> {
                        for (int p = params.size() - 1; p >= 1; p--) { // p0 unused: zeroed at finish
                            buckets.ready(params.get(p), compute);
                        }
                        buckets.finish(compute);
                    };
                    for (int i = 0; i < STEPS; i++) { // warm-up: JIT, the rebuild after the first step
                        step.run();
                    }
                    com.sun.management.ThreadMXBean bean =
                            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                    long tid = Thread.currentThread().getId();
                    long ops = backend.ops;
                    long before = bean.getThreadAllocatedBytes(tid);
                    for (int i = 0; i < STEPS; i++) {
                        step.run();
                    }
                    long after = bean.getThreadAllocatedBytes(tid);
                    assertTrue(backend.ops - ops > 10L * STEPS, "the steps enqueued work: " + (backend.ops - ops));
                    assertEquals(0, (after - before) / STEPS, "bytes allocated per step (" + (after - before)
                            + " in " + STEPS + " steps)");
                    assertEquals(2 * STEPS, buckets.steps());
                }
            }
        }
    }

    /** The host backend's memory, with streams and events that only count. */
    static final class CountingBackend extends ForwardingBackend {
        long ops;

        CountingBackend(HostBackend host) {
            super(host);
        }

        @Override
        public RuntimeStream createStream(int device, String label) {
            return new CountingStream(this, device);
        }

        @Override
        public RuntimeEvent createEvent(int device, boolean timing) {
            return new InertEvent();
        }

        @Override
        public RuntimeStream runtimeStream(Stream stream) {
            if (stream instanceof CountingStream) {
                return (CountingStream) stream;
            }
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "stream: not a counting stream");
        }

        @Override
        public void close() {
            // the host backend is closed by its owner
        }
    }

    /** Counts operations; runs none. */
    record CountingStream(CountingBackend backend, int device) implements RuntimeStream {
        @Override
        public String label() {
            return "counting";
        }

        @Override
        public void copy(long dst, long src, long bytes) {
            backend.ops++;
        }

        @Override
        public void waitValue32(PinnedMemory mem, long offset, int value) {
            backend.ops++;
        }

        @Override
        public void writeValue32(PinnedMemory mem, long offset, int value) {
            backend.ops++;
        }

        @Override
        public void scale(long dst, long a, long count, DataType type, long scalar, int divisor) {
            backend.ops++;
        }

        @Override
        public void waitAny(io.flexlink.runtime.PinnedMemory mem, long offset, int mask) {
            backend.ops++;
        }

        @Override
        public void reduce(long dst, long a, long b, long count, DataType type, ReduceOp op, int divisor) {
            backend.ops++;
        }

        @Override
        public void reduceFromHost(long dst, long a, PinnedMemory mem, long bOffset, long count, DataType type,
                                   ReduceOp op, int divisor) {
            backend.ops++;
        }

        @Override
        public FlexLinkException failure() {
            return null;
        }

        @Override
        public void record(RuntimeEvent event) {
            backend.ops++;
        }

        @Override
        public void waitEvent(RuntimeEvent event) {
            backend.ops++;
        }

        @Override
        public void synchronize() {
        }

        @Override
        public boolean isIdle() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    /** An event that is always complete. */
    static final class InertEvent implements RuntimeEvent {
        @Override
        public boolean isComplete() {
            return true;
        }

        @Override
        public void synchronize() {
        }

        @Override
        public float elapsedMillis(RuntimeEvent start) {
            return 0;
        }

        @Override
        public void close() {
        }
    }

}
