package io.flexlink.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.flexlink.Communicator;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.PinnedMemory;
import io.flexlink.runtime.RuntimeEvent;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.Bounded;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Every public entry point — {@code FlexLink}, {@code Communicator}, {@code UniqueId}, {@code Backend}
 * (the host backend) with its streams and events, {@code FlexLinkConfig}, the parsers of the API's enums —
 * called with hostile arguments (nulls, negative and huge numbers, freed and foreign addresses, closed and
 * foreign objects, malformed text) either returns or throws a {@link FlexLinkException} carrying an error
 * result: never another exception, never a crash of the JVM, never a hang. {@link ApiEntry} makes each
 * call; calls that are accepted run (on a one-rank communicator, alone) and are drained after each try.
 */
class PublicApiExceptionsTest {
    static final Duration BOUND = Duration.ofSeconds(20);
    static ApiTargets targets;
    private static int threadBaseline;
    /** Per entry point: calls accepted, calls refused (printed, so that a run shows what it reached). */
    private static final java.util.Map<ApiEntry, int[]> outcomes = new java.util.EnumMap<>(ApiEntry.class);

    @BeforeContainer
    static void open() {
        threadBaseline = Bounded.flexlinkThreads().size();
        targets = new ApiTargets();
    }

    @AfterContainer
    static void close() {
        StringBuilder sb = new StringBuilder("public API sweep (accepted/refused):");
        outcomes.forEach((e, n) -> sb.append(' ').append(e).append('=').append(n[0]).append('/').append(n[1]));
        System.out.println(sb);
        targets.close();
        Bounded.threadsBackTo(threadBaseline, BOUND);
    }

    @AfterTry
    void drain() {
        targets.drain();
    }

    @Provide
    Arbitrary<Long> numbers() {
        return Arbitraries.oneOf(Arbitraries.of(Long.MIN_VALUE, -4097L, -1L, 0L, 1L, 3L, 4L, 7L, 255L, 4095L, 4096L,
                4097L, 65535L, 65536L, 1L << 20, (1L << 31) - 1, 1L << 31, 1L << 32, 1L << 40, Long.MAX_VALUE / 24,
                Long.MAX_VALUE / 2, Long.MAX_VALUE), Arbitraries.longs().between(-100, 5000));
    }

    @Provide
    Arbitrary<Integer> ints() {
        return Arbitraries.oneOf(Arbitraries.of(Integer.MIN_VALUE, -1, 0, 1, 2, 3, 7, 8, 12, 99, 4096, 4097,
                65535, 65536, 70000, Integer.MAX_VALUE), Arbitraries.integers().between(-3, 10));
    }

    @Provide
    Arbitrary<String> texts() {
        return Arbitraries.oneOf(Arbitraries.of("", " ", "0", "-1", "1", "2", "4095", "4K", "8M", "1G", "2G", "99999999999999999999",
                "9223372036854775807", "auto", "off", "host", "cuda", "primary", "pcie", "primary,pcie", "pcie=0.5",
                "pcie=2", "pcie=0.2,pcie=0.3", "pcie=", "=", ",", "1s", "500ms", "-5s", "153722867280913m", "10m",
                "primary:1MB/s", "pcie:0MB/s", "00112233445566778899aabbccddeeff", "!!", "AAAA", "127.0.0.1", "::1",
                "localhost", "no.such.host.invalid", "192.0.2.1", "999.1.1.1", "float", "half", "sum", "avg",
                "all_reduce", "bogus", "\u0000", "/dev/shm", "flexlink-0-1-abc", ApiTargets.VALID_ID),
                Arbitraries.just((String) null), Arbitraries.strings().ofMaxLength(12));
    }

    @Provide
    Arbitrary<ApiEntry> entries() {
        return Arbitraries.of(ApiEntry.class);
    }

    @Property(tries = 1500, seed = "20261201")
    void everyEntryPointReturnsOrThrowsOnlyFlexLinkException(@ForAll("entries") ApiEntry entry,
            @ForAll("numbers") long a, @ForAll("numbers") long b, @ForAll("numbers") long c,
            @ForAll("ints") int i, @ForAll("ints") int j, @ForAll("texts") String s, @ForAll("texts") String t) {
        try {
            entry.call(targets, new ApiEntry.Args(a, b, c, i, j, s, t));
            outcomes.computeIfAbsent(entry, k -> new int[2])[0]++;
        } catch (FlexLinkException e) {
            assertNotNull(e.result(), () -> entry + " threw a FlexLinkException without a result");
            assertNotEquals(Result.SUCCESS, e.result(), () -> entry + " threw SUCCESS: " + e.getMessage());
            assertNotNull(e.detail(), () -> entry + ": no message");
            outcomes.computeIfAbsent(entry, k -> new int[2])[1]++;
        } catch (Throwable e) {
            fail(entry + "(a=" + a + ", b=" + b + ", c=" + c + ", i=" + i + ", j=" + j + ", s=" + s + ", t=" + t
                    + ") threw " + e, e);
        }
        for (RuntimeStream stream : targets.ownStreams()) {
            assertEquals(null, stream.failure(), () -> entry + " left a failed stream: " + stream.failure());
        }
        assertEquals(Result.SUCCESS, targets.single.getAsyncError(), () -> entry + " broke the communicator");
    }

    /** The objects the calls are made on: one host backend, a one-rank communicator, memory, streams, events. */
    static final class ApiTargets implements AutoCloseable {
        /** Half of {@link #memory}: well-formed calls read one region and write the other. */
        static final long REGION = 1 << 15;
        static final String VALID_ID = io.flexlink.UniqueId.random().toBase64();
        final HostBackend backend = new HostBackend(FlexLinkConfig.builder()
                .set(FlexLinkConfig.INIT_TIMEOUT, "200ms").set(FlexLinkConfig.TUNING_CACHE, "off").build());
        final HostBackend foreign = new HostBackend(FlexLinkConfig.builder().build());
        final Communicator single;
        final Communicator closed;
        final DeviceMemory memory;
        final DeviceMemory elsewhere;
        final PinnedMemory pinned;
        final PinnedMemory closedPinned;
        final RuntimeStream stream;
        final RuntimeStream otherDevice;
        final RuntimeStream closedStream;
        final RuntimeStream foreignStream;
        final RuntimeEvent event;
        final RuntimeEvent timing;
        final RuntimeEvent foreignEvent;
        final long freed;
        final List<AutoCloseable> made = new ArrayList<>();

        ApiTargets() {
            FlexLinkConfig config = FlexLinkConfig.builder().set(FlexLinkConfig.TUNING_CACHE, "off").build();
            single = io.flexlink.FlexLink.initAll(backend, config, 0)[0];
            closed = io.flexlink.FlexLink.initAll(backend, config, 0)[0];
            closed.close();
            memory = backend.allocate(0, 1 << 16);
            elsewhere = backend.allocate(1, 1 << 16);
            pinned = backend.allocatePinned(4096);
            closedPinned = backend.allocatePinned(4096);
            closedPinned.close();
            DeviceMemory gone = backend.allocate(0, 1 << 16);
            freed = gone.address();
            gone.close();
            stream = backend.createStream(0, "api.r0");
            otherDevice = backend.createStream(1, "api.r1");
            closedStream = backend.createStream(0, "api.closed");
            closedStream.close();
            foreignStream = foreign.createStream(0, "api.foreign");
            event = backend.createEvent(0, false);
            timing = backend.createEvent(0, true);
            foreignEvent = foreign.createEvent(0, true);
        }

        long regionA() {
            return memory.address();
        }

        long regionB() {
            return memory.address() + REGION;
        }

        /** An address: null, foreign, inside, at the edges of or past live memory, freed, another device's. */
        long address(long pick) {
            long m = memory.address();
            long[] all = {0, 0x1000, m, m + 8, m + memory.byteSize() - 4, m + memory.byteSize(), freed,
                pinned.hostAddress(), elsewhere.address(), Long.MAX_VALUE, -1, m + 3};
            return all[(int) Math.floorMod(pick, (long) all.length)];
        }

        RuntimeStream stream(int pick) {
            RuntimeStream[] all = {stream, stream, otherDevice, closedStream, foreignStream, null};
            return all[Math.floorMod(pick, all.length)];
        }

        RuntimeEvent event(int pick) {
            RuntimeEvent[] all = {event, timing, foreignEvent, null};
            return all[Math.floorMod(pick, all.length)];
        }

        PinnedMemory pinned(int pick) {
            PinnedMemory[] all = {pinned, pinned, closedPinned, null};
            return all[Math.floorMod(pick, all.length)];
        }

        List<RuntimeStream> ownStreams() {
            return List.of(stream, otherDevice);
        }

        /** Keeps what an accepted call made, to close it after the try. */
        <T extends AutoCloseable> T keep(T made) {
            this.made.add(made);
            return made;
        }

        void drain() {
            for (RuntimeStream s : ownStreams()) {
                Bounded.idle(s, BOUND);
            }
            Bounded.idle(foreignStream, BOUND);
            for (int k = made.size() - 1; k >= 0; k--) {
                try {
                    made.get(k).close();
                } catch (Exception e) {
                    throw new AssertionError("closing " + made.get(k) + " threw " + e, e);
                }
            }
            made.clear();
        }

        @Override
        public void close() {
            drain();
            single.close();
            stream.close();
            otherDevice.close();
            foreignStream.close();
            memory.close();
            elsewhere.close();
            pinned.close();
            event.close();
            timing.close();
            foreignEvent.close();
            assertEquals(0, backend.liveBytes(), "off-heap bytes left");
            assertEquals(0, backend.liveStreams(), "streams left");
            backend.close();
            foreign.close();
        }
    }
}
