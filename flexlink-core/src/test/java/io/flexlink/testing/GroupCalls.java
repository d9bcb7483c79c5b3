package io.flexlink.testing;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.verify.Expected;

/**
 * The host-cost probes' calls: one collective on every rank of a set of communicators made by one thread, each
 * rank with its buffers and stream, enqueued as one group ({@code groupStart}, a call per rank, {@code groupEnd};
 * float32, SUM). {@code count} is per rank as the API takes it; buffers are sized by {@link Expected}.
 */
public final class GroupCalls implements AutoCloseable {
    private final Collective collective;
    private final Communicator[] comms;
    private final long count;
    private final int root;
    private final DeviceMemory[] in;
    private final DeviceMemory[] out;
    private final RuntimeStream[] streams;

    /**
     * The probes' split: several ranks on one device run the PCIe path alone; one rank runs the primary path
     * and PCIe with a share of 0.1; every call splits; no tuning cache.
     */
    public static FlexLinkConfig.Builder probeConfig(int ranks, String chunk) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.PATHS, ranks == 1 ? "primary,pcie" : "pcie")
                .set(FlexLinkConfig.SHARE, ranks == 1 ? "pcie=0.1" : "auto").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, chunk).set(FlexLinkConfig.TUNING_CACHE, "off");
    }

    /** Buffers and streams from {@code memory} (device 0) for {@code comms}; {@code root} for the rooted ones. */
    public GroupCalls(Backend memory, Communicator[] comms, Collective c, long count, int root) {
        this.collective = c;
        this.comms = comms;
        this.count = count;
        this.root = root;
        int n = comms.length;
        in = new DeviceMemory[n];
        out = new DeviceMemory[n];
        streams = new RuntimeStream[n];
        for (int r = 0; r < n; r++) {
            in[r] = memory.allocate(0, 4 * Expected.inputCount(c, count, n));
            out[r] = memory.allocate(0, 4 * Expected.outputCount(c, count, n));
            streams[r] = memory.createStream(0, "user.r" + r);
        }
    }

    /** Sets every byte of every rank's input to {@code value}. */
    public GroupCalls fill(Backend memory, byte value) {
        for (DeviceMemory m : in) {
            memory.fill(m.address(), m.byteSize(), value);
        }
        return this;
    }

    /** One call per rank, in one group. */
    public void enqueue() {
        FlexLink.groupStart();
        for (int r = 0; r < comms.length; r++) {
            CollectiveHarness.enqueue(collective, comms[r], in[r].address(), out[r].address(), count,
                    DataType.FLOAT32, ReduceOp.SUM, root, streams[r]);
        }
        FlexLink.groupEnd();
    }

    /** Every rank's stream, in rank order. */
    public RuntimeStream[] streams() {
        return streams.clone();
    }

    /** Waits for every rank's stream. */
    public void synchronize() {
        for (RuntimeStream s : streams) {
            s.synchronize();
        }
    }

    /**
     * Host µs of each of {@code reps} groups ({@link #enqueue} alone timed, the streams synchronized after each,
     * untimed), after {@code warmup} untimed ones; {@code beforeTimed} runs once between the two.
     */
    public double[] time(int warmup, int reps, Runnable beforeTimed) {
        return time(warmup, reps, beforeTimed, Runnable::run, null);
    }

    /**
     * As {@link #time(int, int, Runnable)}, each group enqueued inside {@code around} (which runs it once, a host
     * gate say); {@code whole}, if not null, gets each timed group's µs from its start to the end of the
     * synchronization.
     */
    public double[] time(int warmup, int reps, Runnable beforeTimed, java.util.function.Consumer<Runnable> around,
                         double[] whole) {
        double[] t = new double[reps];
        long[] enqueued = new long[2];
        Runnable timedEnqueue = () -> {
            enqueued[0] = System.nanoTime();
            enqueue();
            enqueued[1] = System.nanoTime();
        };
        for (int i = -warmup; i < reps; i++) {
            if (i == 0) {
                beforeTimed.run();
            }
            around.accept(timedEnqueue);
            synchronize();
            long t2 = System.nanoTime();
            if (i >= 0) {
                t[i] = (enqueued[1] - enqueued[0]) / 1e3;
                if (whole != null) {
                    whole[i] = (t2 - enqueued[0]) / 1e3;
                }
            }
        }
        return t;
    }

    /** The communicators first, then the buffers and streams. */
    @Override
    public void close() {
        for (int r = 0; r < comms.length; r++) {
            comms[r].close();
            in[r].close();
            out[r].close();
            streams[r].close();
        }
    }
}
