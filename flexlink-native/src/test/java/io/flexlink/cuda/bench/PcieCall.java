package io.flexlink.cuda.bench;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.testing.CollectiveHarness;

/**
 * Two ranks of GPU 0 over the PCIe path alone, with buffers for AllGather and AllReduce of one buffer size (the
 * AllGather's output; each rank sends half of it), kept open so that a harness can time single calls between other
 * work ({@link PathRatio}) as well as a series of one collective ({@link CudaMeasurements#pcieMillis}).
 */
final class PcieCall implements AutoCloseable {
    private final Backend backend;
    private final long bufferBytes;
    private final boolean inPlace;
    private final Communicator[] comms;
    private final RuntimeStream[] user = new RuntimeStream[2];
    private final DeviceMemory[] send = new DeviceMemory[2];
    private final DeviceMemory[] recv = new DeviceMemory[2];
    private final RuntimeEvent start;
    private final RuntimeEvent joined;
    private final RuntimeEvent end;
    private final HostGate gate;

    /** {@code inPlace}: each rank's input is its block of the output (AllGather) or the output itself. */
    PcieCall(Backend backend, long bufferBytes, String chunk, int slots, boolean inPlace) {
        this.backend = backend;
        this.bufferBytes = bufferBytes;
        this.inPlace = inPlace;
        FlexLinkConfig config = FlexLinkConfig.builder()
                .set(FlexLinkConfig.PATHS, "pcie")
                .set(FlexLinkConfig.CHUNK_BYTES, chunk)
                .set(FlexLinkConfig.SLOTS, Integer.toString(slots))
                .build();
        comms = FlexLink.initAll(backend, config, 0, 0);
        start = backend.createEvent(0, true);
        joined = backend.createEvent(0, false);
        end = backend.createEvent(0, true);
        gate = new HostGate(backend);
        for (int r = 0; r < 2; r++) {
            user[r] = backend.createStream(0, "bench.u" + r);
            send[r] = backend.allocate(0, bufferBytes);
            recv[r] = backend.allocate(0, bufferBytes);
            CudaMeasurements.randomize(backend, send[r].address(), bufferBytes, 10 + r);
            CudaMeasurements.randomize(backend, recv[r].address(), bufferBytes, 20 + r);
        }
    }

    /**
     * One call of {@code c} on both ranks: {GPU ms, host ms to enqueue both ranks}. Gated: both user streams first
     * wait on a host counter that is written only once both ranks are enqueued, so that the GPU time leaves out this
     * one thread's enqueue of rank 0 before rank 1 (real ranks enqueue concurrently).
     */
    double[] run(Collective c, boolean gated) {
        long count = c == Collective.ALL_GATHER ? bufferBytes / 2 / 4 : bufferBytes / 4;
        long sendBytes = count * 4;
        long[] enqueued = new long[1];
        Runnable call = () -> {
            user[0].record(start);
            user[1].waitEvent(start);
            long t0 = System.nanoTime();
            for (int r = 0; r < 2; r++) {
                long in = !inPlace ? send[r].address()
                        : recv[r].address() + (c == Collective.ALL_GATHER ? r * sendBytes : 0);
                CollectiveHarness.enqueue(c, comms[r], in, recv[r].address(), count, DataType.FLOAT32, ReduceOp.SUM,
                        0, user[r]);
            }
            enqueued[0] = System.nanoTime() - t0;
            user[1].record(joined);
            user[0].waitEvent(joined);
            user[0].record(end);
        };
        if (gated) {
            gate.hold(call, user);
        } else {
            call.run();
        }
        end.synchronize();
        return new double[] {end.elapsedMillis(start), enqueued[0] / 1e6};
    }

    @Override
    public void close() {
        for (Communicator comm : comms) {
            comm.close();
        }
        for (int r = 0; r < 2; r++) {
            user[r].close();
            send[r].close();
            recv[r].close();
        }
        start.close();
        joined.close();
        end.close();
        gate.close();
    }
}
