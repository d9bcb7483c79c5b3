package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Collective;
import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.ReduceOp;
import io.flexlink.Result;
import io.flexlink.UniqueId;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import io.flexlink.testing.CollectiveHarness;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link Communicator#split}, like ncclCommSplit: children by color, ordered by (key, parent rank), each a full
 * FlexLink communicator over its own ranks (exact results for every collective, its own PCIe path carrying its
 * share), NO_COLOR ranks without a child, bad input refused on every rank, and parents and children
 * independent once the split returned.
 */
class SplitTest {
    private static final FlexLinkConfig CONFIG = FlexLinkConfig.builder()
            .set(FlexLinkConfig.SHARE, "pcie=0.25").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
            .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.INIT_TIMEOUT, "30s")
            .set(FlexLinkConfig.TUNING_CACHE, "off").build();

    /** Every rank of {@code parents} splits on a thread of its own (the call is collective and blocking). */
    static List<Future<Optional<Communicator>>> splitAsync(ExecutorService pool, Communicator[] parents,
                                                           IntUnaryOperator color, IntUnaryOperator key) {
        List<Future<Optional<Communicator>>> fs = new ArrayList<>();
        for (int r = 0; r < parents.length; r++) {
            int rank = r;
            fs.add(pool.submit(() -> parents[rank].split(color.applyAsInt(rank), key.applyAsInt(rank))));
        }
        return fs;
    }

    @SuppressWarnings("unchecked")
    static Optional<Communicator>[] split(Communicator[] parents, IntUnaryOperator color, IntUnaryOperator key)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(parents.length);
        try {
            List<Future<Optional<Communicator>>> fs = splitAsync(pool, parents, color, key);
            Optional<Communicator>[] out = new Optional[parents.length];
            for (int r = 0; r < parents.length; r++) {
                out[r] = fs.get(r).get(2, TimeUnit.MINUTES); // a guard against a hang, not a timed assertion
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /** The children of {@code color}, indexed by child rank; every slot is filled by exactly one parent rank. */
    static Communicator[] children(Optional<Communicator>[] kids, IntUnaryOperator colorOf, int color) {
        List<Communicator> in = new ArrayList<>();
        for (int r = 0; r < kids.length; r++) {
            if (colorOf.applyAsInt(r) == color) {
                in.add(kids[r].orElseThrow());
            }
        }
        Communicator[] out = new Communicator[in.size()];
        for (Communicator c : in) {
            assertEquals(in.size(), c.size(), c.toString());
            assertNull(out[c.rank()], "child rank " + c.rank() + " twice");
            out[c.rank()] = c;
        }
        return out;
    }

    /** Every collective on {@code comms}, poisoned outputs checked element by element, and both paths used. */
    static void everyCollectiveExact(HostBackend backend, Communicator[] comms, String what, long seed) {
        try (CollectiveHarness h = new CollectiveHarness(backend, comms)) {
            for (Collective c : Collective.collectives()) {
                int root = comms.length - 1;
                CollectiveHarness.Outcome o = h.run(c, DataType.FLOAT32, ReduceOp.SUM, 10_001, root, false, seed++);
                assertEquals(0, o.wrong, what + " " + c + ": " + o);
                long pcie = o.bytes("pcie");
                long primary = o.bytes("primary");
                assertTrue(pcie > 0 && primary > 0, what + " " + c + " split over the child's own paths: " + o);
                double share = (double) pcie / (pcie + primary);
                assertTrue(Math.abs(share - 0.25) < 0.02, what + " " + c + ": pcie carried " + share + ": " + o);
                o = h.run(c, DataType.BFLOAT16, ReduceOp.MAX, 3_001, 0, true, seed++);
                assertEquals(0, o.wrong, what + " " + c + " in place: " + o);
            }
        }
    }

    static void closeAll(Communicator... comms) {
        for (Communicator c : comms) {
            c.close();
        }
    }

    @Test
    void aTreeOfSplitsGivesExactResultsOnEveryChildOverItsOwnPaths() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3, 4, 5, 6, 7);
            IntUnaryOperator parity = r -> r % 2;
            Optional<Communicator>[] level1 = split(world, parity, r -> r);
            List<Communicator> made = new ArrayList<>();
            for (int color = 0; color < 2; color++) {
                Communicator[] kids = children(level1, parity, color);
                assertEquals(4, kids.length);
                for (int i = 0; i < 4; i++) {
                    assertEquals(2 * i + color, kids[i].device(), "child rank " + i + " on its parent's device");
                    made.add(kids[i]);
                }
                everyCollectiveExact(backend, kids, "parity " + color, 100 * color);
                IntUnaryOperator half = r -> r < 2 ? 0 : 1;
                Optional<Communicator>[] level2 = split(kids, half, r -> r);
                for (int h = 0; h < 2; h++) {
                    Communicator[] grand = children(level2, half, h);
                    assertEquals(2, grand.length);
                    assertEquals(kids[2 * h].device(), grand[0].device());
                    assertEquals(kids[2 * h + 1].device(), grand[1].device());
                    everyCollectiveExact(backend, grand, "parity " + color + " half " + h, 1000 + 10 * h);
                    made.addAll(List.of(grand));
                }
            }
            everyCollectiveExact(backend, world, "the parent after its splits", 5000);
            closeAll(made.toArray(new Communicator[0]));
            closeAll(world);
        }
    }

    /** Ranks that met over TCP (as processes do): each color's leader serves its child's rendezvous. */
    @Test
    void ranksThatMetOverTcpSplitOverTcp() throws Exception {
        UniqueId id = FlexLink.getUniqueId("127.0.0.1", 0);
        UniqueId sent = UniqueId.fromBase64(id.toBase64()); // what another process would get
        try (HostBackend backend = new HostBackend(CONFIG)) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            Communicator[] world = new Communicator[4];
            try {
                List<Future<Communicator>> fs = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    int rank = r;
                    fs.add(pool.submit(() -> FlexLink.initRank(backend, CONFIG, 4, rank == 0 ? id : sent, rank, rank)));
                }
                for (int r = 0; r < 4; r++) {
                    world[r] = fs.get(r).get(2, TimeUnit.MINUTES); // a hang guard only
                }
            } finally {
                pool.shutdownNow();
            }
            IntUnaryOperator parity = r -> r % 2;
            Optional<Communicator>[] kids = split(world, parity, r -> r);
            for (int color = 0; color < 2; color++) {
                Communicator[] pair = children(kids, parity, color);
                everyCollectiveExact(backend, pair, "over TCP, parity " + color, 60 + color);
                closeAll(pair);
            }
            closeAll(world);
            assertEquals(0, backend.liveBytes(), "every child's and parent's memory released");
        }
    }

    @Test
    void noColorRanksGetNoChild() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3);
            int[] colors = {7, Communicator.SPLIT_NOCOLOR, 7, Communicator.SPLIT_NOCOLOR};
            Optional<Communicator>[] kids = split(world, r -> colors[r], r -> 0);
            assertTrue(kids[1].isEmpty() && kids[3].isEmpty(), "NO_COLOR: no child");
            Communicator[] pair = children(kids, r -> colors[r], 7);
            assertEquals(2, pair.length);
            everyCollectiveExact(backend, pair, "color 7", 9);
            closeAll(pair);
            closeAll(world);
        }
    }

    /** Each child rank contributes its parent rank to an AllGather: the result lists the members in child order. */
    static int[] parentRanksInChildOrder(HostBackend backend, Communicator[] kids, int[] parentRankOfChild) {
        int n = kids.length;
        DeviceMemory[] send = new DeviceMemory[n];
        DeviceMemory[] recv = new DeviceMemory[n];
        RuntimeStream[] streams = new RuntimeStream[n];
        ByteBuffer b = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
        for (int r = 0; r < n; r++) {
            send[r] = backend.allocate(kids[r].device(), 4);
            recv[r] = backend.allocate(kids[r].device(), 4L * n);
            streams[r] = backend.createStream(kids[r].device(), "gather" + r);
            b.clear();
            b.putInt(0, parentRankOfChild[r]).limit(4);
            backend.upload(send[r].address(), b);
            backend.fill(recv[r].address(), 4L * n, (byte) 0xff);
        }
        for (int r = 0; r < n; r++) {
            kids[r].allGather(send[r].address(), recv[r].address(), 1, DataType.INT32, streams[r]);
        }
        int[] seen = null;
        for (int r = 0; r < n; r++) {
            streams[r].synchronize();
            b.clear().limit(4 * n);
            backend.download(b, recv[r].address());
            int[] got = new int[n];
            for (int i = 0; i < n; i++) {
                got[i] = b.getInt(4 * i);
            }
            if (seen != null) {
                assertArrayEquals(seen, got, "child rank " + r);
            }
            seen = got;
            send[r].close();
            recv[r].close();
            streams[r].close();
        }
        return seen;
    }

    @Test
    void childRanksFollowTheKeysThenTheParentRanks() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3);
            // reversed keys: reversed ranks
            Optional<Communicator>[] kids = split(world, r -> 0, r -> 10 - r);
            int[] parentOf = new int[4];
            for (int r = 0; r < 4; r++) {
                assertEquals(3 - r, kids[r].orElseThrow().rank(), "parent rank " + r);
                parentOf[3 - r] = r;
            }
            Communicator[] reversed = children(kids, r -> 0, 0);
            assertArrayEquals(new int[] {3, 2, 1, 0}, parentRanksInChildOrder(backend, reversed, parentOf));
            // equal keys fall back on the parent's order: keys {5, 5, 1, 1} give parents 2, 3, 0, 1
            int[] keys = {5, 5, 1, 1};
            Optional<Communicator>[] tied = split(world, r -> 0, r -> keys[r]);
            int[] want = {2, 3, 0, 1};
            for (int i = 0; i < 4; i++) {
                assertEquals(i, tied[want[i]].orElseThrow().rank());
                parentOf[i] = want[i];
            }
            assertArrayEquals(want, parentRanksInChildOrder(backend, children(tied, r -> 0, 0), parentOf));
            closeAll(reversed);
            closeAll(children(tied, r -> 0, 0));
            closeAll(world);
        }
    }

    @Test
    void aColorBelowNoColorIsRefusedOnEveryRankAndTheParentSplitsLater() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2);
            int[] colors = {0, -2, 0};
            ExecutorService pool = Executors.newFixedThreadPool(3);
            try {
                List<Future<Optional<Communicator>>> fs = splitAsync(pool, world, r -> colors[r], r -> r);
                for (int r = 0; r < 3; r++) {
                    ExecutionException e = assertThrows(ExecutionException.class, fs.get(r)::get);
                    FlexLinkException f = assertInstanceOf(FlexLinkException.class, e.getCause());
                    assertEquals(Result.INVALID_ARGUMENT, f.result(), f.getMessage());
                    assertTrue(f.getMessage().contains("color: -2 on rank 1"), f.getMessage());
                }
            } finally {
                pool.shutdownNow();
            }
            // the parent's exchange is still in step: a good split works
            Optional<Communicator>[] kids = split(world, r -> 0, r -> r);
            Communicator[] all = children(kids, r -> 0, 0);
            everyCollectiveExact(backend, all, "after a refused split", 77);
            closeAll(all);
            closeAll(world);
        }
    }

    @Test
    void aClosedOrAbortedParentAndASplitInsideAGroupAreRefused() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1);
            FlexLink.groupStart();
            try {
                FlexLinkException e = assertThrows(FlexLinkException.class, () -> world[0].split(0, 0));
                assertEquals(Result.INVALID_USAGE, e.result());
                assertTrue(e.getMessage().contains("split: rank 0 is inside a group"), e.getMessage());
            } finally {
                FlexLink.groupEnd();
            }
            // nothing of the refused split reached the exchange
            Optional<Communicator>[] kids = split(world, r -> 0, r -> r);
            closeAll(children(kids, r -> 0, 0));
            world[0].close();
            world[1].abort();
            FlexLinkException closed = assertThrows(FlexLinkException.class, () -> world[0].split(0, 0));
            assertEquals(Result.INVALID_USAGE, closed.result());
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
            FlexLinkException aborted = assertThrows(FlexLinkException.class, () -> world[1].split(0, 0));
            assertEquals(Result.INVALID_USAGE, aborted.result());
            assertTrue(aborted.getMessage().contains("aborted"), aborted.getMessage());
            world[1].close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"close", "abort"})
    void childrenOutliveTheirParent(String end) throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3);
            IntUnaryOperator parity = r -> r % 2;
            Optional<Communicator>[] kids = split(world, parity, r -> r);
            for (Communicator c : world) {
                if (end.equals("abort")) {
                    c.abort();
                }
                c.close();
            }
            for (int color = 0; color < 2; color++) {
                Communicator[] pair = children(kids, parity, color);
                everyCollectiveExact(backend, pair, "after the parent's " + end + ", parity " + color, 31 + color);
                for (Communicator c : pair) {
                    assertEquals(Result.SUCCESS, c.getAsyncError(), "the parent's " + end + " did not reach it");
                }
                closeAll(pair);
            }
        }
    }

    @Test
    void theParentOutlivesItsChildren() throws Exception {
        try (HostBackend backend = new HostBackend(CONFIG)) {
            Communicator[] world = FlexLink.initAll(backend, CONFIG, 0, 1, 2, 3);
            IntUnaryOperator parity = r -> r % 2;
            Optional<Communicator>[] kids = split(world, parity, r -> r);
            for (Optional<Communicator> k : kids) {
                assertNotNull(k.orElseThrow());
            }
            children(kids, parity, 0)[0].abort(); // an aborted child tells its own peers only
            for (Optional<Communicator> k : kids) {
                k.orElseThrow().close();
            }
            everyCollectiveExact(backend, world, "after the children closed", 55);
            for (Communicator c : world) {
                assertEquals(Result.SUCCESS, c.getAsyncError());
            }
            closeAll(world);
        }
    }
}
