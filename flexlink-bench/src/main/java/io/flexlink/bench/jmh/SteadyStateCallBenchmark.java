package io.flexlink.bench.jmh;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The host cost of enqueueing one small AllReduce on a 1-rank communicator, in steady state. Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes the call allocates (the rule is none in
 * FlexLink's own code; the backend's stream queue may add its own). The stream is drained every
 * {@link #DRAIN} calls so the queue stays short. With the watchdog on (the default), each call also records
 * its "done" event; {@code timeout=0} shows the call without it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class SteadyStateCallBenchmark {
    static final int DRAIN = 256;

    @Param({"host"})
    public String backend;

    /** Elements per call. */
    @Param({"256"})
    public int count;

    /** The watchdog's timeout ({@code flexlink.timeout}): on by default, {@code 0} turns it off. */
    @Param({"10m", "0"})
    public String timeout;

    private Backend be;
    private Communicator comm;
    private RuntimeStream stream;
    private DeviceMemory send;
    private DeviceMemory recv;
    private long sendAddr;
    private long recvAddr;
    private int calls;

    @Setup(Level.Trial)
    public void setUp() {
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, backend)
                .set(FlexLinkConfig.TIMEOUT, timeout).build();
        be = io.flexlink.FlexLink.openBackend(config);
        comm = FlexLink.initAll(be, config, 0)[0];
        stream = be.createStream(0, "jmh.steady");
        long bytes = (long) count * DataType.FLOAT32.size();
        send = be.allocate(0, bytes);
        recv = be.allocate(0, bytes);
        be.fill(send.address(), bytes, (byte) 0);
        sendAddr = send.address();
        recvAddr = recv.address();
    }

    @Benchmark
    public void allReduce() {
        comm.allReduce(sendAddr, recvAddr, count, DataType.FLOAT32, ReduceOp.SUM, stream);
        if (++calls == DRAIN) {
            calls = 0;
            stream.synchronize();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        stream.synchronize();
        comm.close();
        stream.close();
        send.close();
        recv.close();
        be.close();
    }
}
