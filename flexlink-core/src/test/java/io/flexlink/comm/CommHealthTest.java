package io.flexlink.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import io.flexlink.path.CollectiveCall;
import io.flexlink.path.Path;
import io.flexlink.runtime.PeerOps;
import io.flexlink.runtime.RuntimeStream;
import java.lang.reflect.Proxy;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A call's health check asks the streams (a device query on CUDA) at most every {@link CommHealth#POLL_NANOS} of
 * its injected clock and reads only what they already know in between; {@code poll()} always asks. It asks through
 * {@link RuntimeStream#pollForDomain()} alone, which says whether a stream stood for its fault domain: the fake streams
 * refuse {@code failure()} and count {@code isCapturing()}.
 */
class CommHealthTest {
    private final long[] clock = {5_000_000_000L};
    /** Per stream: [0] polls that asked (pollForDomain() of a stream not being captured), [1] knownFailure() calls. */
    private final int[][] calls = new int[2][2];
    /** What each stream finds when asked, and what it already knows. */
    private final FlexLinkException[] found = new FlexLinkException[2];
    private final FlexLinkException[] known = new FlexLinkException[2];
    /** Each stream's fault domain: distinct unless a test shares them. */
    private final Object[] domains = {"device 0", "device 1"};
    /** Whether each stream is being captured (it then answers no query). */
    private final boolean[] capturing = new boolean[2];
    /** isCapturing() calls of any stream: the poll answers for the capture state. */
    private int captureChecks;
    private CommHealth health;
    private int aborts;

    @BeforeEach
    void create() {
        Path lanes = new FakePath(new RuntimeStream[] {stream(0), stream(1)});
        health = new CommHealth(0, 2, null, new Path[] {lanes}, new ReentrantLock(), null, () -> clock[0]);
    }

    @Test
    void aCallAsksTheStreamsOncePerIntervalAndReadsWhatTheyKnowInBetween() {
        assertNull(health.check());
        assertCalls(1, 1);
        clock[0] += CommHealth.POLL_NANOS - 1;
        assertNull(health.check());
        assertNull(health.check());
        assertCalls(1, 3);
        clock[0] += 1;
        assertNull(health.check());
        assertCalls(2, 4);
    }

    @Test
    void aFailureTheStreamAlreadyKnowsIsSeenAtTheNextCall() {
        assertNull(health.check());
        known[1] = new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "rejected launch");
        FlexLinkException e = health.check();
        assertEquals(Result.UNHANDLED_CUDA_ERROR, e.result());
        assertSame(known[1], e.getCause());
        assertCalls(1, 2);
        assertEquals(1, aborts, "the peers are told");
        assertSame(e, health.check(), "the first error sticks");
    }

    @Test
    void aFailureOnlyAQueryFindsWaitsForTheNextInterval() {
        assertNull(health.check());
        found[0] = new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "illegal address");
        clock[0] += CommHealth.POLL_NANOS / 2;
        assertNull(health.check(), "no query yet");
        clock[0] += CommHealth.POLL_NANOS / 2;
        assertSame(found[0], health.check().getCause());
    }

    @Test
    void pollingAlwaysAsksTheStreams() {
        assertNull(health.check());
        found[0] = new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "illegal address");
        assertSame(found[0], health.poll().getCause(), "getAsyncError and the watchdog ask at once");
        assertEquals(2, calls[0][0], "polls that asked");
    }

    @Test
    void streamsOfOneFaultDomainAreAskedOnceAPoll() {
        int[] callerAsked = oneDeviceWithTheCaller();
        assertNull(health.poll());
        assertEquals(1, calls[0][0], "the domain's first stream is asked");
        assertEquals(0, calls[1][0], "the second stream of its domain is not");
        assertEquals(1, calls[1][1], "but what it already knows is read");
        assertEquals(0, callerAsked[0], "nor the caller's stream of the same domain");
        found[0] = new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "illegal address");
        FlexLinkException e = health.poll();
        assertSame(found[0], e.getCause());
        assertEquals("pcie stream lane0 failed: illegal address", e.detail());
    }

    @Test
    void aStreamBeingCapturedLeavesTheQueryToTheNextOfItsDomain() {
        int[] callerAsked = oneDeviceWithTheCaller();
        capturing[0] = true;
        assertNull(health.poll());
        assertEquals(0, calls[0][0], "the captured stream is not asked");
        assertEquals(1, calls[1][0], "the next stream of its device is");
        assertEquals(0, callerAsked[0], "the device answered already");
        found[1] = new FlexLinkException(Result.UNHANDLED_CUDA_ERROR, "illegal address");
        assertSame(found[1], health.poll().getCause(), "the second stream answered for the device");
    }

    @Test
    void whenEveryPathStreamIsCapturedTheCallersStreamIsAsked() {
        int[] callerAsked = oneDeviceWithTheCaller();
        capturing[0] = true;
        capturing[1] = true;
        assertNull(health.poll());
        assertEquals(0, calls[0][0] + calls[1][0]);
        assertEquals(1, callerAsked[0]);
    }

    @Test
    void aCallersStreamOfAnotherDomainIsAsked() {
        int[] callerAsked = new int[1];
        health.used(caller("device 7", callerAsked));
        assertNull(health.poll());
        assertEquals(1, callerAsked[0]);
        assertCalls(1, 1);
    }

    @Test
    void theCaptureStateIsLeftToThePoll() {
        oneDeviceWithTheCaller();
        capturing[0] = true;
        assertNull(health.poll());
        assertNull(health.check());
        clock[0] += CommHealth.POLL_NANOS;
        assertNull(health.check());
        assertEquals(3, calls[1][0], "the stream not captured answered each poll for the device");
        assertEquals(0, calls[0][0], "the captured one none");
        assertEquals(0, captureChecks, "no capture check besides the stream's own, inside its poll");
    }

    /** Both path streams and the caller's in one fault domain; how often the caller's stream is asked. */
    private int[] oneDeviceWithTheCaller() {
        domains[1] = domains[0];
        create();
        int[] callerAsked = new int[1];
        health.used(caller(domains[0], callerAsked));
        return callerAsked;
    }

    private RuntimeStream caller(Object domain, int[] asked) {
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "pollForDomain":
                            asked[0]++;
                            return true;
                        case "knownFailure":
                            return null;
                        case "faultDomain":
                            return domain;
                        case "isCapturing":
                            captureChecks++;
                            return false;
                        case "label":
                            return "caller";
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    private void assertCalls(int asked, int read) {
        for (int s = 0; s < 2; s++) {
            assertEquals(asked, calls[s][0], "stream " + s + ": polls that asked");
            assertEquals(read, calls[s][1], "stream " + s + ": knownFailure() calls");
        }
    }

    private RuntimeStream stream(int s) {
        return (RuntimeStream) Proxy.newProxyInstance(RuntimeStream.class.getClassLoader(),
                new Class<?>[] {RuntimeStream.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "pollForDomain":
                            if (capturing[s]) {
                                return false;
                            }
                            calls[s][0]++;
                            if (found[s] != null && known[s] == null) {
                                known[s] = found[s]; // a fault found is kept
                            }
                            return true;
                        case "knownFailure":
                            calls[s][1]++;
                            return known[s];
                        case "faultDomain":
                            return domains[s];
                        case "isCapturing":
                            captureChecks++;
                            return capturing[s];
                        case "label":
                            return "lane" + s;
                        default:
                            throw new UnsupportedOperationException(m.getName());
                    }
                });
    }

    private final class FakePath implements Path {
        private final RuntimeStream[] streams;

        FakePath(RuntimeStream[] streams) {
            this.streams = streams;
        }

        @Override
        public String name() {
            return "pcie";
        }

        @Override
        public RuntimeStream[] streams() {
            return streams;
        }

        @Override
        public void enqueue(CollectiveCall call, long offset, long length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void exchange(PeerOps ops, RuntimeStream stream) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void abort() {
            aborts++;
        }

        @Override
        public void close() {
        }
    }
}
