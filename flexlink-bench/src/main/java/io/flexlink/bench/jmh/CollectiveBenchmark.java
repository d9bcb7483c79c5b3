package io.flexlink.bench.jmh;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.ReduceOp;
import io.flexlink.config.ByteSizes;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.Backend;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Throughput of whole collectives: every invocation enqueues {@link #BATCH} calls on every rank (each
 * call a group over the ranks, as one thread drives them all) and synchronizes once.
 *
 * <p>How to read the results (mode thrpt, unit ops/s): the primary score is collective calls per
 * second. The secondary results {@code algbw} and {@code busbw} are {@link Bandwidth} counters that add
 * the call's gigabytes (10^9 bytes, nccl-tests' algorithm bytes and bus bytes) per call; JMH normalizes
 * them by time like operations, so their "ops/s" are GB/s, directly comparable with nccl-tests' and
 * flexlink-perf's algbw and busbw columns. Run with
 * {@code java -jar flexlink-bench/target/benchmarks.jar CollectiveBenchmark -p size=16M}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CollectiveBenchmark {
    /** Calls per invocation (per synchronization). */
    public static final int BATCH = 8;

    /** The communicators and their buffers, made once per trial. */
    @State(Scope.Benchmark)
    public static class Ranks {
        @Param({"all_reduce", "all_gather", "reduce_scatter"})
        public String collective;

        /** nccl-tests' size: the larger buffer of one rank. */
        @Param({"1M", "16M"})
        public String size;

        /** {@code host}, or {@code cuda} on a GPU host. */
        @Param({"host"})
        public String backend;

        /** {@code flexlink}: primary path and PCIe path with {@link #share}; {@code primary}: the primary path alone. */
        @Param({"flexlink", "primary"})
        public String mode;

        @Param({"4"})
        public int ranks;

        /**
         * FlexLink's shares in mode flexlink: fixed by default, so that every iteration measures the same
         * split; {@code -p share=auto} lets the balancer decide them instead (it tunes during warm-up).
         */
        @Param({"pcie=0.25"})
        public String share;

        Backend be;
        Communicator[] comms;
        RuntimeStream[] streams;
        DeviceMemory[] send;
        DeviceMemory[] recv;
        Collective coll;
        long count;
        double algGigabytes;
        double busGigabytes;

        @Setup(Level.Trial)
        public void setUp() {
            coll = Collective.parse(collective);
            FlexLinkConfig.Builder cb = FlexLinkConfig.builder().set(FlexLinkConfig.BACKEND, backend);
            if (mode.equals("primary")) {
                cb.set(FlexLinkConfig.PATHS, "primary");
            } else {
                cb.set(FlexLinkConfig.SHARE, share);
            }
            FlexLinkConfig config = cb.build();
            be = io.flexlink.FlexLink.openBackend(config);
            int[] devices = new int[ranks];
            for (int r = 0; r < ranks; r++) {
                devices[r] = r % be.deviceCount();
            }
            comms = FlexLink.initAll(be, config, devices);
            DataType type = DataType.FLOAT32;
            long bytes = ByteSizes.parse(size);
            long elems = bytes / type.size();
            // nccl-tests' per-rank counts: the larger buffer is `bytes`
            count = coll == Collective.ALL_REDUCE ? elems : elems / ranks / 4 * 4;
            long sendBytes = (coll == Collective.REDUCE_SCATTER ? count * ranks : count) * type.size();
            long recvBytes = (coll == Collective.ALL_GATHER ? count * ranks : count) * type.size();
            double algBytes = Math.max(sendBytes, recvBytes);
            algGigabytes = algBytes / 1e9;
            busGigabytes = algGigabytes * coll.busFactor(ranks);
            streams = new RuntimeStream[ranks];
            send = new DeviceMemory[ranks];
            recv = new DeviceMemory[ranks];
            for (int r = 0; r < ranks; r++) {
                streams[r] = be.createStream(devices[r], "jmh.r" + r);
                send[r] = be.allocate(devices[r], sendBytes);
                recv[r] = be.allocate(devices[r], recvBytes);
                be.fill(send[r].address(), sendBytes, (byte) 0);
                be.fill(recv[r].address(), recvBytes, (byte) 0);
            }
        }

        void batch() {
            for (int k = 0; k < BATCH; k++) {
                FlexLink.groupStart();
                try {
                    for (int r = 0; r < comms.length; r++) {
                        long s = send[r].address();
                        long d = recv[r].address();
                        switch (coll) {
                            case ALL_REDUCE:
                                comms[r].allReduce(s, d, count, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
                                break;
                            case ALL_GATHER:
                                comms[r].allGather(s, d, count, DataType.FLOAT32, streams[r]);
                                break;
                            default:
                                comms[r].reduceScatter(s, d, count, DataType.FLOAT32, ReduceOp.SUM, streams[r]);
                        }
                    }
                } finally {
                    FlexLink.groupEnd();
                }
            }
            for (RuntimeStream s : streams) {
                s.synchronize();
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            for (RuntimeStream s : streams) {
                s.synchronize();
            }
            for (Communicator c : comms) {
                c.close();
            }
            for (int r = 0; r < streams.length; r++) {
                streams[r].close();
                send[r].close();
                recv[r].close();
            }
            be.close();
        }
    }

    /**
     * Gigabytes moved, as JMH secondary results: reset by JMH before every iteration and normalized by
     * its time, so the score is GB/s.
     */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Bandwidth {
        /** Algorithm bandwidth: nccl-tests' size (the larger buffer of one rank) per call. */
        public double algbw;
        /** Bus bandwidth: algbw times nccl-tests' bus factor for the collective and rank count. */
        public double busbw;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void collective(Ranks ranks, Bandwidth bw) {
        ranks.batch();
        bw.algbw += BATCH * ranks.algGigabytes;
        bw.busbw += BATCH * ranks.busGigabytes;
    }
}
