package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * After an abort the teardown frees the paths only once the device's streams that were busy when it began have run,
 * releasing the paths' waits meanwhile: on CUDA a free waits for the whole device, so a free made while a peer's
 * stream on the same GPU still waits on a handshake word would never return.
 */
class TeardownTest {
    private static final long BOUND = TimeUnit.SECONDS.toNanos(5);

    /** A stream of the device that is not the path's: busy while its flag is set. */
    private final boolean[] peerBusy = {true};
    private final RuntimeStream peer = stream(peerBusy);
    /** How often the device was asked, and after how many answers the peer's work has run (then it stays idle). */
    private int deviceAsked;
    private int peerRunsFor = 3;

    private List<RuntimeStream> deviceBusy() {
        deviceAsked++;
        if (deviceAsked > peerRunsFor) {
            peerBusy[0] = false;
        }
        List<RuntimeStream> busy = new ArrayList<>();
        if (peerBusy[0]) {
            busy.add(peer);
        }
        return busy;
    }

    @Test
    void anAbortedPathIsFreedOnlyOnceTheDevicesBusyStreamsHaveRun() {
        FakePath path = new FakePath();
        Teardown t = new Teardown(0, 2, null, new Path[] {path}, this::deviceBusy);

        assertTrue(t.release(BOUND, true));

        assertTrue(deviceAsked > peerRunsFor, "asked until the peer's stream had run: " + deviceAsked);
        assertTrue(path.closed);
        assertTrue(path.aborts >= 2, "released when the teardown began and once more before the free: " + path.aborts);
    }

    @Test
    void aDeviceThatStaysBusyLeavesThePathForALaterReleaseAndTheWaitIsKicked() {
        peerRunsFor = Integer.MAX_VALUE;
        FakePath path = new FakePath();
        Teardown t = new Teardown(0, 2, null, new Path[] {path}, this::deviceBusy);

        assertFalse(t.release(TimeUnit.MILLISECONDS.toNanos(20), true));
        assertFalse(path.closed, "freeing now would wait for the device for ever");
        assertTrue(path.aborts >= 3, "released again every millisecond while it waited: " + path.aborts);

        peerRunsFor = 0; // the peer's work has run
        assertTrue(t.release(0, true));
        assertTrue(path.closed);
        assertTrue(t.done());
    }

    @Test
    void workEnqueuedAfterTheAbortBeganIsNotWaitedFor() {
        peerRunsFor = 2;
        FakePath path = new FakePath();
        path.busyFor = Integer.MAX_VALUE; // its own streams stay busy: the first release gives up
        Teardown t = new Teardown(0, 2, null, new Path[] {path}, this::deviceBusy);
        assertFalse(t.release(TimeUnit.MILLISECONDS.toNanos(5), true));
        assertFalse(peerBusy[0], "the peer's work of before the abort has run meanwhile");

        peerBusy[0] = true; // new work on the peer's stream, e.g. another communicator's next call
        peerRunsFor = Integer.MAX_VALUE;
        path.busyFor = 0;
        assertTrue(t.release(0, true), "only the streams busy when the abort began are waited for");
        assertTrue(path.closed);
    }

    @Test
    void aCloseAfterADrainDoesNotAskTheDevice() {
        peerRunsFor = Integer.MAX_VALUE;
        FakePath path = new FakePath();
        Teardown t = new Teardown(0, 2, null, new Path[] {path}, this::deviceBusy);

        assertTrue(t.release(BOUND, false));
        assertEquals(0, deviceAsked, "the communicator's own work was drained; its peers' is theirs");
        assertTrue(path.closed);
        assertEquals(0, path.aborts);
    }

    private static RuntimeStream stream(boolean[] busy) {
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "isIdle":
                            return !busy[0];
                        case "label":
                        case "toString":
                            return "stream";
                        case "hashCode":
                            return System.identityHashCode(p);
                        case "equals":
                            return p == a[0];
                        default:
                            throw new AssertionError("not expected: " + m.getName());
                    }
                });
    }

    private static final class FakePath implements Path {
        int aborts;
        boolean closed;
        /** Its stream stays busy while this is positive (counted down by each look). */
        int busyFor;
        private final boolean[] busy = new boolean[1];
        private final RuntimeStream own = stream(busy);

        @Override
        public String name() {
            return "pcie";
        }

        @Override
        public RuntimeStream[] streams() {
            busy[0] = busyFor > 0;
            return new RuntimeStream[] {own};
        }

        @Override
        public void enqueue(CollectiveCall call, long offset, long length) {
            throw new AssertionError("nothing is enqueued by a teardown");
        }

        @Override
        public void exchange(PeerOps ops, RuntimeStream stream) {
            throw new AssertionError("nothing is enqueued by a teardown");
        }

        @Override
        public void abort() {
            if (closed) {
                throw new AssertionError("released after its memory was freed");
            }
            aborts++;
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
