package io.flexlink.bench.jmh;

import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.host.HostBackend;
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
 * The cost of the host backend's check that a buffer is a live allocation of its own
 * ({@code Backend.accessProblem}), made twice per collective call (send and receive) before anything is
 * enqueued, with {@link #allocations} live allocations. Run with {@code -prof gc}: it must allocate
 * nothing.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class HostMemoryCheckBenchmark {
    @Param({"16", "1024"})
    public int allocations;

    private HostBackend backend;
    private DeviceMemory[] memory;
    private long address;
    private int next;

    @Setup(Level.Trial)
    public void setUp() {
        backend = new HostBackend(FlexLinkConfig.builder().build());
        memory = new DeviceMemory[allocations];
        for (int i = 0; i < allocations; i++) {
            memory[i] = backend.allocate(0, 4096);
        }
    }

    @Setup(Level.Iteration)
    public void pick() {
        address = memory[next++ % allocations].address() + 128;
    }

    @Benchmark
    public String check() {
        return backend.accessProblem(address, 1024, 0);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (DeviceMemory m : memory) {
            m.close();
        }
        backend.close();
    }
}
