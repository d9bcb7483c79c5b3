package io.flexlink.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Buffer;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad input throws FlexLinkException with NCCL's result code and a message that starts with the argument. */
class BucketBadInputTest {
    private HostBackend backend;
    private Communicator comm;
    private DeviceMemory grad;
    private RuntimeStream stream;

    @BeforeEach
    void open() {
        backend = new HostBackend(DdpRig.CONFIG);
        comm = DdpRig.comms(backend, 1)[0];
        grad = backend.allocate(0, 4096);
        stream = backend.createStream(0, "test.compute");
    }

    @AfterEach
    void close() {
        stream.close();
        grad.close();
        comm.close();
        backend.close();
    }

    private static void refused(Result result, String start, Executable call) {
        FlexLinkException e = assertThrows(FlexLinkException.class, call);
        assertEquals(result, e.result(), e.getMessage());
        assertTrue(e.detail().startsWith(start), "'" + e.detail() + "' starts with '" + start + "'");
    }

    private GradientBucketsBuilder builder() {
        return GradientBuckets.builder(comm, backend).config(DdpRig.CONFIG);
    }

    @Test
    void registrationChecksEveryArgument() {
        refused(Result.INVALID_ARGUMENT, "comm: null", () -> GradientBuckets.builder(null, backend));
        refused(Result.INVALID_ARGUMENT, "backend: null", () -> GradientBuckets.builder(comm, null));
        GradientBucketsBuilder b = builder();
        refused(Result.INVALID_ARGUMENT, "gradient: null", () -> b.register("w", null, 4, DataType.FLOAT32));
        refused(Result.INVALID_ARGUMENT, "type: INT32", () -> b.register("w", grad, 4, DataType.INT32));
        refused(Result.INVALID_ARGUMENT, "type: null", () -> b.register("w", grad, 4, null));
        refused(Result.INVALID_ARGUMENT, "count: must be positive", () -> b.register("w", grad, 0, DataType.FLOAT32));
        refused(Result.INVALID_ARGUMENT, "count: 1025 elements", () -> b.register("w", grad, 1025, DataType.FLOAT32));
        refused(Result.INVALID_ARGUMENT, "gradient: parameter 'w' is on device 1",
                () -> b.register("w", Buffer.wrap(grad.address(), 64, 1), 4, DataType.FLOAT32));
        b.register("a", grad.slice(0, 400), 100, DataType.FLOAT32);
        refused(Result.INVALID_ARGUMENT, "gradient: parameter 'b' overlaps the gradient of 'a'",
                () -> b.register("b", grad.slice(396, 400), 100, DataType.FLOAT32));
        refused(Result.INVALID_ARGUMENT, "op: gradients are combined with SUM or AVG",
                () -> b.reduction(ReduceOp.MAX, 1));
        refused(Result.INVALID_ARGUMENT, "scale: must be finite", () -> b.reduction(ReduceOp.SUM, Double.NaN));
        refused(Result.INVALID_ARGUMENT, "scale: must be finite", () -> b.reduction(ReduceOp.SUM, 0));
        refused(Result.INVALID_ARGUMENT, "bucketCap: must be positive", () -> b.bucketCap(0));
        refused(Result.INVALID_ARGUMENT, "firstBucketCap: must be positive", () -> b.firstBucketCap(-1));
        refused(Result.INVALID_ARGUMENT, "config: null", () -> b.config(null));
        refused(Result.INVALID_ARGUMENT, "cast: the wire type must be BFLOAT16 or FLOAT16",
                () -> b.cast(new FixedWireCast(DataType.FLOAT8E4M3)));
    }

    @Test
    void buildChecksWhatOnlyTheWholeSetShows() {
        refused(Result.INVALID_USAGE, "build: no parameter registered", () -> builder().build());
        GradientBucketsBuilder cast = builder().cast(new FixedWireCast(DataType.BFLOAT16));
        cast.register("d", grad, 8, DataType.FLOAT64);
        refused(Result.INVALID_ARGUMENT, "cast: converts FLOAT32 gradients only", cast::build);
        try (RuntimeStream other = backend.createStream(1, "other")) {
            GradientBucketsBuilder s = builder().communicationStream(other);
            s.register(grad, 8, DataType.FLOAT32);
            refused(Result.INVALID_ARGUMENT, "commStream: on device 1", s::build);
        }
        GradientBucketsBuilder once = builder();
        once.register(grad, 8, DataType.FLOAT32);
        once.build().close();
        refused(Result.INVALID_USAGE, "builder: already built", once::build);
        refused(Result.INVALID_USAGE, "builder: already built", () -> once.register(grad, 8, DataType.FLOAT32));
    }

    @Test
    void readyAndFinishCheckTheirArgumentsAndChangeNothing() {
        GradientBucketsBuilder b = builder();
        Parameter p = b.register("w", grad, 16, DataType.FLOAT32);
        GradientBucketsBuilder other = builder();
        Parameter foreign = other.register("x", grad, 16, DataType.FLOAT32);
        try (GradientBuckets buckets = b.build(); RuntimeStream device1 = backend.createStream(1, "d1");
             HostBackend second = new HostBackend(DdpRig.CONFIG);
             RuntimeStream alien = second.createStream(0, "alien")) {
            refused(Result.INVALID_ARGUMENT, "param: null", () -> buckets.ready(null, stream));
            refused(Result.INVALID_ARGUMENT, "param: 'x' (#0, 16 FLOAT32) was registered with other",
                    () -> buckets.ready(foreign, stream));
            refused(Result.INVALID_ARGUMENT, "computeStream: null", () -> buckets.ready(p, null));
            refused(Result.INVALID_ARGUMENT, "computeStream: on device 1", () -> buckets.ready(p, device1));
            refused(Result.INVALID_ARGUMENT, "computeStream: stream: ", () -> buckets.ready(p, alien));
            refused(Result.INVALID_ARGUMENT, "computeStream: null", () -> buckets.finish(null));
            buckets.ready(p, stream); // nothing above changed the step
            buckets.finish(stream);
            stream.synchronize();
            assertEquals(1, buckets.steps());
            buckets.close();
            refused(Result.INVALID_USAGE, "ready: the gradient buckets are closed", () -> buckets.ready(p, stream));
        }
    }

    /** A cast that claims a wire type and converts nothing (only its type is looked at here). */
    private record FixedWireCast(DataType wireType) implements GradientCast {
        @Override
        public void toWire(RuntimeStream stream, long src, long dst, long count) {
            throw new AssertionError("not used");
        }

        @Override
        public void fromWire(RuntimeStream stream, long src, long dst, long count) {
            throw new AssertionError("not used");
        }
    }
}
