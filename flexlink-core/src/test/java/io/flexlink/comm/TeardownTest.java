package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.Proxy;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The teardown's frees after an abort wait for the device's other streams as well as the path's own, releasing the
 * path's waits meanwhile: on CUDA a free waits for the whole device, so a free made while a peer's stream on the
 * same GPU still waits on a handshake word would never return.
 */
class TeardownTest {
    private static final long BOUND = TimeUnit.SECONDS.toNanos(5);

    /** The device answers busy this many times, then idle; every answer is counted. */
    private int busyAnswersLeft;
    private int deviceAsked;

    private boolean deviceIdle() {
        deviceAsked++;
        return busyAnswersLeft-- <= 0;
    }

    @Test
    void anAbortedPathIsFreedOnlyOnceTheDeviceIsIdleAndIsReleasedWhileItWaits() {
        busyAnswersLeft = 3;
        FakePath path = new FakePath();
        Teardown t = new Teardown(0, 2, null, new Path[] {path}, this::deviceIdle);

        assertTrue(t.release(BOUND, true));

        assertEquals(4, deviceAsked, "asked until the device answered idle");
        assertTrue(path.closed);
        assertTrue(path.aborts >= 1, "the last release after the device was idle");
        assertTrue(path.abortsBeforeClose == path.aborts, "nothing is released after the memory is freed");
    }

    @Test
    void aDeviceThatStaysBusyLeavesThePathForALaterRelease() {
        busyAnswersLeft = Integer.MAX_VALUE;
        FakePath path = new FakePath();
        Teardown t = new Teardown(0, 2, null, new Path[] {path}, this::deviceIdle);

        assertFalse(t.release(TimeUnit.MILLISECONDS.toNanos(20), true));
        assertFalse(path.closed, "freeing now would wait for the device for ever");
        assertTrue(path.aborts >= 2, "released again while it waited: " + path.aborts);

        busyAnswersLeft = 0;
        assertTrue(t.release(BOUND, true));
        assertTrue(path.closed);
        assertTrue(t.done());
    }

    @Test
    void aCloseWithoutAbortDoesNotAskTheDevice() {
        busyAnswersLeft = Integer.MAX_VALUE;
        FakePath path = new FakePath();
        Teardown t = new Teardown(0, 2, null, new Path[] {path}, this::deviceIdle);

        assertTrue(t.release(BOUND, false));
        assertEquals(0, deviceAsked, "the communicator's own work was drained; its peers' is theirs");
        assertTrue(path.closed);
        assertEquals(0, path.aborts);
    }

    private static final class FakePath implements Path {
        int aborts;
        int abortsBeforeClose = -1;
        boolean closed;
        private final RuntimeStream idle = (RuntimeStream) Proxy.newProxyInstance(
                RuntimeStream.class.getClassLoader(), new Class<?>[] {RuntimeStream.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "isIdle":
                            return true;
                        case "label":
                        case "toString":
                            return "idle";
                        case "hashCode":
                            return System.identityHashCode(p);
                        case "equals":
                            return p == a[0];
                        default:
                            throw new AssertionError("not expected: " + m.getName());
                    }
                });

        @Override
        public String name() {
            return "pcie";
        }

        @Override
        public RuntimeStream[] streams() {
            return new RuntimeStream[] {idle};
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
            abortsBeforeClose = aborts;
        }
    }
}
