package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.flexlink.Buffer;
import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.Stream;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import io.flexlink.testing.CollectiveHarness;
import java.time.Duration;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Fuzz of the public API: random collectives, types (and null), operations (and null), counts (negative,
 * zero, small, huge, overflowing), roots (in and out of range), buffer overloads with short or long
 * buffers on the right or wrong device, aliasing (disjoint, in place at the rank's position, send ==
 * recv, partial overlap, null), streams (own, null, another device's, another backend's), on a live, a closed and an
 * aborted communicator. An independent statement of NCCL's rules ({@link FuzzCall#valid}) says what each
 * call is; a valid one must succeed with every element of every rank right ({@code io.flexlink.verify}),
 * an invalid one must throw INVALID_ARGUMENT (INVALID_USAGE on a closed or aborted communicator) having
 * enqueued nothing; the live communicator must still run a verified collective afterwards. Every wait is
 * bounded, so a hang fails. The address overloads cannot check sizes (NCCL's cannot either), so huge
 * counts that do not overflow go through the buffer overloads only: through an address they are the
 * caller's memory error, not the library's.
 */
class ApiFuzzTest {
    static final int N = 3;
    static final Duration BOUND = Duration.ofSeconds(10);
    private static HostBackend backend;
    private static HostBackend foreign;
    private static Communicator[] live;
    private static Communicator[] closed;
    private static Communicator[] aborted;
    private static RuntimeStream[] streams;
    private static RuntimeStream foreignStream;
    private static DeviceMemory[] pools;
    private static CollectiveHarness harness;
    private static int threadBaseline;
    private static final int[] outcomes = new int[3]; // verified, rejected, zero-count no-ops

    @BeforeContainer
    static void open() {
        threadBaseline = Bounded.flexlinkThreads().size();
        FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.SHARE, "pcie=0.4")
                .set(FlexLinkConfig.MIN_SPLIT_BYTES, "0").set(FlexLinkConfig.CHUNK_BYTES, "4K")
                .set(FlexLinkConfig.SLOTS, "2").set(FlexLinkConfig.TIMEOUT, "30s").build();
        backend = new HostBackend(config);
        foreign = new HostBackend(config);
        foreignStream = foreign.createStream(0, "foreign");
        live = FlexLink.initAll(backend, config, 0, 1, 2);
        closed = FlexLink.initAll(backend, config, 0, 1, 2);
        aborted = FlexLink.initAll(backend, config, 0, 1, 2);
        for (int r = 0; r < N; r++) {
            closed[r].close();
            aborted[r].abort();
        }
        streams = new RuntimeStream[N];
        pools = new DeviceMemory[N];
        for (int r = 0; r < N; r++) {
            streams[r] = backend.createStream(r, "fuzz.r" + r);
            pools[r] = backend.allocate(r, FuzzCall.POOL);
        }
        harness = new CollectiveHarness(backend, live);
    }

    @AfterContainer
    static void close() {
        harness.close();
        for (int r = 0; r < N; r++) {
            live[r].close();
            closed[r].close();
            aborted[r].close();
            Bounded.idle(streams[r], BOUND);
            streams[r].close();
            pools[r].close();
        }
        foreignStream.close();
        foreign.close();
        System.out.println("API fuzz: " + outcomes[0] + " valid calls verified, " + outcomes[1] + " rejected, "
                + outcomes[2] + " zero-count no-ops");
        assertEquals(0, backend.liveBytes(), "off-heap bytes left");
        assertEquals(0, backend.liveStreams(), "streams left");
        backend.close();
        Bounded.threadsBackTo(threadBaseline, BOUND);
    }

    @Provide
    Arbitrary<FuzzCall.Target> targets() {
        return Arbitraries.frequencyOf(Tuple.of(18, Arbitraries.just(FuzzCall.Target.LIVE)),
                Tuple.of(1, Arbitraries.just(FuzzCall.Target.CLOSED)), Tuple.of(1, Arbitraries.just(FuzzCall.Target.ABORTED)));
    }

    @Provide
    Arbitrary<Collective> collectives() {
        return Arbitraries.of(Collective.collectives());
    }

    @Provide
    Arbitrary<DataType> types() {
        return Arbitraries.of(DataType.class).injectNull(0.03);
    }

    @Provide
    Arbitrary<ReduceOp> ops() {
        return Arbitraries.of(ReduceOp.class).injectNull(0.03);
    }

    @Provide
    Arbitrary<Long> counts() {
        return Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.longs().between(1, FuzzCall.SAFE_COUNT)),
                Tuple.of(1, Arbitraries.just(0L)),
                Tuple.of(1, Arbitraries.longs().between(Long.MIN_VALUE, -1)),
                Tuple.of(2, Arbitraries.of(FuzzCall.SAFE_COUNT + 1, 1L << 40, Long.MAX_VALUE / 24, Long.MAX_VALUE / 2,
                        Long.MAX_VALUE)));
    }

    @Provide
    Arbitrary<FuzzCall.Layout> layouts() {
        return Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.just(FuzzCall.Layout.OUT_OF_PLACE)),
                Tuple.of(6, Arbitraries.just(FuzzCall.Layout.IN_PLACE)), Tuple.of(1, Arbitraries.just(FuzzCall.Layout.SAME)),
                Tuple.of(1, Arbitraries.just(FuzzCall.Layout.OVERLAP)),
                Tuple.of(1, Arbitraries.just(FuzzCall.Layout.NULL_SEND)), Tuple.of(1, Arbitraries.just(FuzzCall.Layout.NULL_RECV)));
    }

    @Provide
    Arbitrary<FuzzCall.StreamKind> streamKinds() {
        return Arbitraries.frequencyOf(Tuple.of(27, Arbitraries.just(FuzzCall.StreamKind.OWN)),
                Tuple.of(1, Arbitraries.just(FuzzCall.StreamKind.NULL)), Tuple.of(1, Arbitraries.just(FuzzCall.StreamKind.OTHER_DEVICE)),
                Tuple.of(1, Arbitraries.just(FuzzCall.StreamKind.FOREIGN)));
    }

    @Provide
    Arbitrary<Integer> roots() {
        return Arbitraries.frequencyOf(Tuple.of(9, Arbitraries.integers().between(0, N - 1)),
                Tuple.of(1, Arbitraries.of(-1, N, Integer.MIN_VALUE)));
    }

    @Provide
    Arbitrary<Integer> sizeDeltas() {
        return Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.of(0, 1)), Tuple.of(1, Arbitraries.just(-1)));
    }

    @Provide
    Arbitrary<Boolean> rarely() {
        return Arbitraries.frequencyOf(Tuple.of(15, Arbitraries.just(false)), Tuple.of(1, Arbitraries.just(true)));
    }

    @Property(tries = 300, seed = "20261129", edgeCases = EdgeCasesMode.MIXIN)
    void everyCallGivesADocumentedResultAndTheCommunicatorKeepsWorking(
            @ForAll("targets") FuzzCall.Target target, @ForAll("collectives") Collective collective, @ForAll("types") DataType type,
            @ForAll("ops") ReduceOp op, @ForAll("counts") long count, @ForAll("roots") int root,
            @ForAll @IntRange(min = 0, max = 2) int rank, @ForAll("layouts") FuzzCall.Layout layout,
            @ForAll boolean buffers, @ForAll("sizeDeltas") int sizeDelta,
            @ForAll("rarely") boolean wrongDevice, @ForAll("streamKinds") FuzzCall.StreamKind streamKind) {
        FuzzCall call = new FuzzCall(target, collective, type, op, count, root, rank, layout, buffers, sizeDelta,
                wrongDevice, streamKind, pools[rank].address());
        Communicator comm = (target == FuzzCall.Target.LIVE ? live : target == FuzzCall.Target.CLOSED ? closed : aborted)[rank];
        Stream stream = streamKind == FuzzCall.StreamKind.OWN ? streams[rank]
                : streamKind == FuzzCall.StreamKind.OTHER_DEVICE ? streams[(rank + 1) % N]
                : streamKind == FuzzCall.StreamKind.FOREIGN ? foreignStream : null;
        boolean valid = call.valid();
        Checker checker = valid && count > 0 ? new Checker(backend, call, pools, streams) : null;
        long before = stream instanceof RuntimeStream && stream != foreignStream ? backend.enqueuedOps(stream) : -1;
        try {
            call.invoke(comm, stream);
        } catch (FlexLinkException e) {
            if (valid) {
                fail("a valid call was refused: " + call + ": " + e.getMessage(), e);
            }
            Result expected = target == FuzzCall.Target.LIVE ? Result.INVALID_ARGUMENT : null;
            assertTrue(expected == null ? e.result() == Result.INVALID_ARGUMENT || e.result() == Result.INVALID_USAGE
                    : e.result() == expected, () -> call + " gave " + e.getMessage());
            if (before >= 0) {
                assertEquals(before, backend.enqueuedOps(stream), () -> call + " was refused but enqueued work");
            }
            outcomes[1]++;
            stillWorks(count);
            return;
        }
        if (!valid) {
            fail("an invalid call was accepted: " + call);
        }
        if (checker == null) {
            outcomes[2]++; // count 0: nothing to do
            return;
        }
        checker.runOthersAndVerify(live);
        outcomes[0]++;
    }

    private static void stillWorks(long seed) {
        CollectiveHarness.Outcome o = harness.run(Collective.ALL_REDUCE, DataType.INT32, ReduceOp.SUM, 1500, 0, false, seed);
        assertEquals(0, o.wrong, "the communicator no longer works: " + o);
        for (Communicator c : live) {
            assertEquals(Result.SUCCESS, c.getAsyncError());
        }
    }

    /** The buffers of a valid call on every rank: prepared before it, checked after it. */
    static final class Checker {
        private final HostBackend backend;
        private final FuzzCall call;
        private final RuntimeStream[] streams;
        private final long[] send = new long[N];
        private final long[] recv = new long[N];
        private final java.nio.ByteBuffer[] before = new java.nio.ByteBuffer[N];

        Checker(HostBackend backend, FuzzCall call, DeviceMemory[] pools, RuntimeStream[] streams) {
            this.backend = backend;
            this.call = call;
            this.streams = streams;
            for (int r = 0; r < N; r++) {
                long a = pools[r].address();
                send[r] = r == call.rank ? call.send : a;
                recv[r] = r == call.rank ? call.recv : a + FuzzCall.REGION;
                FuzzData.prepare(backend, call, r, send[r], recv[r], N);
                if (!io.flexlink.verify.Expected.writes(call.collective, r, call.root)) {
                    before[r] = FuzzData.snapshot(backend, call, r, recv[r], N);
                }
            }
        }

        void runOthersAndVerify(Communicator[] comms) {
            for (int r = 0; r < N; r++) {
                if (r != call.rank) {
                    CollectiveHarness.enqueue(call.collective, comms[r], send[r], recv[r], call.count, call.type,
                            call.op, call.root, streams[r]);
                }
            }
            for (int r = 0; r < N; r++) {
                Bounded.idle(streams[r], BOUND);
                streams[r].synchronize();
            }
            for (int r = 0; r < N; r++) {
                String wrong = FuzzData.check(backend, call, r, recv[r], N, before[r]);
                int rank = r;
                assertEquals(null, wrong, () -> call + ": rank " + rank);
            }
        }
    }
}
