package io.flexlink.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Communicator;
import io.flexlink.DataType;
import io.flexlink.FlexLink;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.SignalWait;
import io.flexlink.Window;
import io.flexlink.config.FlexLinkConfig;
import io.flexlink.runtime.DeviceMemory;
import io.flexlink.runtime.RuntimeStream;
import io.flexlink.runtime.host.HostBackend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Communicator.registerWindow and the one-sided calls: on a primary transport with one-sided calls (the host ring
 * with a recording {@link WindowedBackend}, standing in for NCCL) the handles, what reaches the transport, and every
 * bad argument; on the plain host backend and with several ranks on one device the INVALID_USAGE that says why
 * (arguments are checked first, so a wrong call reads the same everywhere).
 */
class WindowTest {
    private static final long N = 1024;
    private HostBackend host;
    private WindowedBackend backend;
    private Communicator[] comms;
    private DeviceMemory[] buf;
    private RuntimeStream stream;
    private final List<Communicator> extra = new ArrayList<>();

    static FlexLinkConfig config(String paths) {
        return FlexLinkConfig.builder().set(FlexLinkConfig.HOST_DEVICES, "2").set(FlexLinkConfig.PATHS, paths)
                .set(FlexLinkConfig.SHARE, "pcie=0.5").set(FlexLinkConfig.MIN_SPLIT_BYTES, "0")
                .set(FlexLinkConfig.CHUNK_BYTES, "4K").set(FlexLinkConfig.TUNING_CACHE, "off").build();
    }

    @BeforeEach
    void setUp() {
        FlexLinkConfig config = config("primary,pcie");
        host = new HostBackend(config);
        backend = new WindowedBackend(host);
        comms = FlexLink.initAll(backend, config, 0, 1);
        buf = new DeviceMemory[] {host.allocate(0, N * 4), host.allocate(1, N * 4)};
        stream = host.createStream(0, "user");
    }

    @AfterEach
    void tearDown() {
        for (Communicator c : extra) {
            c.close();
        }
        for (Communicator c : comms) {
            c.close();
        }
        stream.close();
        for (DeviceMemory m : buf) {
            m.close();
        }
        host.close();
    }

    private void refused(Result result, String argument, Executable call) {
        int before = backend.calls.size();
        io.flexlink.testing.Refusals.refused(host, stream, result, argument, call);
        assertEquals(before, backend.calls.size(), "nothing handed to the transport");
    }

    private String last() {
        return backend.calls.get(backend.calls.size() - 1);
    }

    @Test
    void aWindowIsAHandleThatReachesTheTransportAndClosesOnce() {
        Communicator c = comms[0];
        long a = buf[0].address();
        Window w = c.registerWindow(a, N * 4, 1);
        assertEquals(a, w.address());
        assertEquals(N * 4, w.bytes());
        assertEquals(1, w.flags());
        assertFalse(w.isClosed());
        assertTrue(last().startsWith("0 register 4096 flags 1 -> "), last());
        String nccl = last().substring(last().indexOf("-> ") + 3);
        assertEquals(a, w.userAddress());
        assertEquals("0 userAddress " + nccl, last());
        assertEquals(List.of(w), c.windows());
        assertEquals(List.of(), comms[1].windows(), "this rank's handle");

        c.putSignal(a + 64, 16, DataType.FLOAT32, 1, w, 128, 0, stream);
        assertEquals("0 put 16 FLOAT32 to 1 window " + nccl + " at 128 signal 0 on user", last());
        c.signal(1, 0, stream);
        assertEquals("0 signal 1 0 on user", last());
        c.waitSignal(List.of(new SignalWait(1, 0, 2)), stream);
        assertEquals("0 wait 1/0x2 on user", last());
        c.waitSignal(stream, new SignalWait(0, 0, 1), new SignalWait(1, 0, 1));
        assertEquals("0 wait 0/0x1 1/0x1 on user", last());
        c.putSignal(0, 0, DataType.FLOAT32, 1, w, N * 4, 0, stream); // nothing to copy: a NULL source, as NCCL's
        assertEquals(0, host.enqueuedOps(stream), "the transport enqueues; FlexLink's own streams see nothing");

        w.close();
        assertEquals("0 deregister " + nccl, last());
        assertTrue(w.isClosed());
        int calls = backend.calls.size();
        w.close(); // idempotent
        assertEquals(calls, backend.calls.size());
        assertEquals(List.of(), c.windows());
        refused(Result.INVALID_USAGE, "closed", w::userAddress);
        refused(Result.INVALID_ARGUMENT, "peerWindow", () -> c.putSignal(a, 1, DataType.FLOAT32, 1, w, 0, 0, stream));
    }

    @Test
    void badArgumentsNameTheArgument() {
        Communicator c = comms[0];
        long a = buf[0].address();
        refused(Result.INVALID_ARGUMENT, "address", () -> c.registerWindow(0, 64, 0));
        refused(Result.INVALID_ARGUMENT, "bytes", () -> c.registerWindow(a, 0, 0));
        refused(Result.INVALID_ARGUMENT, "address", () -> c.registerWindow(a, N * 4 + 1, 0)); // past the allocation
        refused(Result.INVALID_ARGUMENT, "address", () -> c.registerWindow(buf[1].address(), 64, 0)); // rank 1's
        refused(Result.INVALID_ARGUMENT, "flags", () -> c.registerWindow(a, 64, -1));
        assertEquals(List.of(), c.windows(), "nothing recorded");

        Window w = c.registerWindow(a, N * 4, 0);
        Window theirs = comms[1].registerWindow(buf[1].address(), N * 4, 0);
        DataType f = DataType.FLOAT32;
        refused(Result.INVALID_ARGUMENT, "count", () -> c.putSignal(a, -1, f, 1, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "count", () -> c.putSignal(a, Long.MAX_VALUE / 2, f, 1, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "type", () -> c.putSignal(a, 1, null, 1, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "src", () -> c.putSignal(0, 1, f, 1, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "src", () -> c.putSignal(a, N + 1, f, 1, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "src", () -> c.putSignal(buf[1].address(), 1, f, 1, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "peer", () -> c.putSignal(a, 1, f, 2, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "peer", () -> c.putSignal(a, 1, f, -1, w, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "peerWindow", () -> c.putSignal(a, 1, f, 1, null, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "peerWindow", () -> c.putSignal(a, 1, f, 1, theirs, 0, 0, stream));
        refused(Result.INVALID_ARGUMENT, "peerOffset", () -> c.putSignal(a, 1, f, 1, w, -4, 0, stream));
        refused(Result.INVALID_ARGUMENT, "peerOffset", () -> c.putSignal(a, 2, f, 1, w, N * 4 - 4, 0, stream));
        refused(Result.INVALID_ARGUMENT, "peerOffset", () -> c.putSignal(a, 0, f, 1, w, N * 4 + 1, 0, stream));
        refused(Result.INVALID_ARGUMENT, "signal", () -> c.putSignal(a, 1, f, 1, w, 0, -1, stream));
        refused(Result.INVALID_ARGUMENT, "stream", () -> c.putSignal(a, 1, f, 1, w, 0, 0, null));
        RuntimeStream other = host.createStream(1, "rank1");
        try {
            refused(Result.INVALID_ARGUMENT, "stream", () -> c.putSignal(a, 1, f, 1, w, 0, 0, other));
            refused(Result.INVALID_ARGUMENT, "stream", () -> c.signal(1, 0, other));
        } finally {
            other.close();
        }
        refused(Result.INVALID_ARGUMENT, "peer", () -> c.signal(2, 0, stream));
        refused(Result.INVALID_ARGUMENT, "signal", () -> c.signal(1, -1, stream));
        refused(Result.INVALID_ARGUMENT, "stream", () -> c.signal(1, 0, null));
        refused(Result.INVALID_ARGUMENT, "waits", () -> c.waitSignal((List<SignalWait>) null, stream));
        refused(Result.INVALID_ARGUMENT, "waits", () -> c.waitSignal(stream, (SignalWait[]) null));
        refused(Result.INVALID_ARGUMENT, "waits[1]", () -> c.waitSignal(stream, new SignalWait(1, 0, 1), null));
        refused(Result.INVALID_ARGUMENT, "waits[1]", () -> c.waitSignal(Arrays.asList(new SignalWait(1, 0, 1),
                null), stream));
        refused(Result.INVALID_ARGUMENT, "waits[0].peer", () -> c.waitSignal(stream, new SignalWait(5, 0, 1)));
        refused(Result.INVALID_ARGUMENT, "waits[1].signal", () -> c.waitSignal(stream, new SignalWait(1, 0, 1),
                new SignalWait(1, -2, 1)));
        refused(Result.INVALID_ARGUMENT, "waits[0].count", () -> c.waitSignal(stream, new SignalWait(1, 0, -1)));
        refused(Result.INVALID_ARGUMENT, "stream", () -> c.waitSignal((io.flexlink.Stream) null,
                new SignalWait(1, 0, 1)));
    }

    @Test
    void insideAGroupEveryWindowCallIsRefused() {
        Communicator c = comms[0];
        Window w = c.registerWindow(buf[0].address(), 64, 0);
        FlexLink.groupStart();
        try {
            refused(Result.INVALID_USAGE, "group", () -> c.registerWindow(buf[0].address(), 64, 0));
            refused(Result.INVALID_USAGE, "group", () -> c.putSignal(buf[0].address(), 1, DataType.INT8, 1, w, 0,
                    0, stream));
            refused(Result.INVALID_USAGE, "group", () -> c.signal(1, 0, stream));
            refused(Result.INVALID_USAGE, "group", () -> c.waitSignal(stream, new SignalWait(1, 0, 1)));
        } finally {
            FlexLink.groupEnd();
        }
        w.close();
    }

    @Test
    void closeAndAbortEndTheWindowsWithoutTheTransport() {
        Window w0 = comms[0].registerWindow(buf[0].address(), 64, 0);
        Window w1 = comms[1].registerWindow(buf[1].address(), 64, 0);
        int calls = backend.calls.size();
        comms[0].close();
        comms[1].abort();
        assertTrue(w0.isClosed() && w1.isClosed(), "closed with their communicators");
        assertEquals(calls, backend.calls.size(), "the transport freed them with its communicator");
        assertEquals(List.of(), comms[0].windows());
        w0.close(); // nothing left to do
        refused(Result.INVALID_USAGE, "closed", () -> comms[0].registerWindow(buf[0].address(), 64, 0));
        refused(Result.INVALID_USAGE, "closed", () -> comms[0].signal(9, -1, null)); // a closed communicator first
        refused(Result.INVALID_USAGE, "aborted", () -> comms[1].signal(0, 0, stream));
    }

    /** The host ring has no one-sided calls: arguments first, then INVALID_USAGE naming what is missing. */
    @Test
    void theHostRingHasNoWindows() {
        FlexLinkConfig config = config("primary,pcie");
        Communicator[] plain = FlexLink.initAll(host, config, 0, 1);
        extra.addAll(List.of(plain));
        refused(Result.INVALID_ARGUMENT, "address", () -> plain[0].registerWindow(0, 64, 0));
        refused(Result.INVALID_USAGE, "NCCL's path", () -> plain[0].registerWindow(buf[0].address(), 64, 0));
        refused(Result.INVALID_USAGE, "not NCCL", () -> plain[0].signal(1, 0, stream));
        refused(Result.INVALID_USAGE, "NCCL's path", () -> plain[0].waitSignal(stream, new SignalWait(1, 0, 1)));
        // no window of its own exists to put into: another communicator's is an argument's error
        Window theirs = comms[0].registerWindow(buf[0].address(), 64, 0);
        refused(Result.INVALID_ARGUMENT, "peerWindow", () -> plain[0].putSignal(0, 0, DataType.FLOAT32, 1, theirs,
                0, 0, stream));
        assertEquals(List.of(), plain[0].windows());
    }

    /** A rank made inside a group is a handle until the group's end made it: its window calls say so. */
    @Test
    void aCommunicatorMadeInAGroupHasWindowsOnceMade() {
        FlexLink.groupStart();
        try {
            Communicator early = FlexLink.initRank(backend, config("primary,pcie"), 1, FlexLink.getUniqueId(), 0, 0);
            extra.add(early);
            refused(Result.INVALID_USAGE, "groupEnd", () -> early.registerWindow(buf[0].address(), 64, 0));
            refused(Result.INVALID_USAGE, "groupEnd", () -> early.signal(0, 0, stream));
            assertEquals(List.of(), early.windows());
        } finally {
            FlexLink.groupEnd();
        }
        Communicator made = extra.get(extra.size() - 1);
        Window w = made.registerWindow(buf[0].address(), 64, 0);
        assertEquals(List.of(w), made.windows());
        made.signal(0, 0, stream);
        assertEquals("0 signal 0 0 on user", last());
    }

    /** Several ranks on one device: the primary path is off (NCCL refuses them), so there are no windows. */
    @Test
    void severalRanksOnOneDeviceHaveNoWindows() {
        Communicator[] shared = FlexLink.initAll(backend, config("pcie"), 0, 0);
        extra.addAll(List.of(shared));
        FlexLinkException e = assertThrows(FlexLinkException.class,
                () -> shared[0].registerWindow(buf[0].address(), 64, 0));
        assertEquals(Result.INVALID_USAGE, e.result(), e.getMessage());
        assertTrue(e.getMessage().contains("needs NCCL's path: this communicator has none (its primary path is off: "
                + "several ranks on one GPU"), e.getMessage());
        refused(Result.INVALID_USAGE, "several ranks on one GPU", () -> shared[1].signal(0, 0, stream));
    }
}
