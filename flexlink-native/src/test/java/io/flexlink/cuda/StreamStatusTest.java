package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flexlink.Result;
import java.util.concurrent.atomic.AtomicLong;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.Test;

/**
 * What a stream's status asks CUDA when the health check polls it, with a fake {@link StreamProbe} and an injected
 * clock: one capture check and one query per due poll, nothing at all between, a stream being captured never
 * queried and not standing for its device, a fault kept and not shared.
 */
class StreamStatusTest {
    private static final long MS = StreamStatus.QUERY_INTERVAL_NANOS;
    private final AtomicLong clock = new AtomicLong(7 * MS);
    private final QueryPacing pacing = new QueryPacing(1, MS, clock::get);
    private final Probe probe = new Probe();
    private final StreamStatus status = new StreamStatus(probe, "pcie-send-0", pacing);

    @Test
    void aDuePollChecksTheCaptureOnceAndQueries() {
        assertTrue(status.poll(0));
        assertEquals(1, probe.captureChecks);
        assertEquals(1, probe.queries);
        assertNull(status.firstFailure());
    }

    @Test
    void aPollThatIsNotDueAsksNothingAndTheLastAnswerStands() {
        assertTrue(status.poll(0));
        clock.addAndGet(MS / 2);
        probe.capturing = true; // begun since: found at the next due poll
        assertTrue(status.poll(0));
        assertEquals(1, probe.captureChecks, "no capture check between due polls");
        assertEquals(1, probe.queries);
        clock.addAndGet(MS / 2);
        assertFalse(status.poll(0), "due again: now found being captured");
        assertEquals(2, probe.captureChecks);
        assertEquals(1, probe.queries, "and not queried");
    }

    @Test
    void aStreamBeingCapturedIsNeverQueriedAndStandsForNothingUntilItIsAskedAgain() {
        probe.capturing = true;
        assertFalse(status.poll(0));
        clock.addAndGet(MS / 2);
        assertFalse(status.poll(0), "not due: the last answer stands");
        assertEquals(1, probe.captureChecks);
        StreamStatus other = new StreamStatus(new Probe(), "pcie-recv-0", pacing);
        assertTrue(other.poll(0), "the device's next stream is still due: the captured one answered nothing");
        probe.capturing = false;
        clock.addAndGet(MS / 2);
        assertFalse(status.poll(0), "not due while the other stream's answer covers the device: still nothing");
        assertEquals(1, probe.captureChecks);
        clock.addAndGet(MS);
        assertTrue(status.poll(0));
        assertEquals(1, probe.queries, "asked once it was no longer captured");
    }

    @Test
    void aCleanAnswerCoversTheOtherStreamsOfItsDevice() {
        assertTrue(status.poll(0));
        Probe otherProbe = new Probe();
        StreamStatus other = new StreamStatus(otherProbe, "pcie-recv-0", pacing);
        clock.addAndGet(MS / 2);
        assertTrue(other.poll(0), "it stands for the device on the first one's answer");
        assertEquals(0, otherProbe.captureChecks + otherProbe.queries, "without asking CUDA anything");
    }

    @Test
    void aFaultFoundIsKeptNamedAndNotSharedWithTheDevice() {
        probe.answer = cudart.cudaErrorIllegalAddress;
        assertTrue(status.poll(0));
        assertNotNull(status.firstFailure());
        assertEquals(Result.UNHANDLED_CUDA_ERROR, status.firstFailure().result());
        assertTrue(status.firstFailure().detail().contains("cudaStreamQuery on stream pcie-send-0"),
                status.firstFailure().detail());
        clock.addAndGet(MS);
        assertTrue(status.poll(0));
        assertEquals(1, probe.queries, "a stream that failed is not asked again");
        Probe otherProbe = new Probe();
        assertTrue(new StreamStatus(otherProbe, "pcie-recv-0", pacing).poll(0));
        assertEquals(1, otherProbe.queries, "the device's other streams still ask for themselves");
    }

    @Test
    void aNotReadyStreamIsHealthyAndBusy() {
        probe.answer = cudart.cudaErrorNotReady;
        assertTrue(status.poll(0));
        assertNull(status.firstFailure());
        assertFalse(status.isIdle());
        probe.answer = 0;
        assertTrue(status.isIdle());
        probe.capturing = true;
        int queries = probe.queries;
        assertFalse(status.isIdle(), "a stream being captured holds a graph's work, not work that runs");
        assertEquals(queries, probe.queries);
    }

    @Test
    void aCaptureFoundIsNotAQueryTheStreamsOwnIsStillDueWithinStaleIntervalsOfItsLast() {
        assertTrue(status.poll(0));
        probe.capturing = true;
        long lastQuery = clock.get();
        for (int i = 1; i <= QueryPacing.STALE; i++) {
            clock.addAndGet(MS);
            pacing.clean(0, clock.get()); // another communicator's stream answers for the device every interval
            assertTrue(status.poll(0) == (i < QueryPacing.STALE), "interval " + i);
        }
        assertEquals(2, probe.captureChecks, "found being captured once its own query was stale");
        probe.capturing = false;
        clock.addAndGet(MS);
        pacing.clean(0, clock.get());
        assertTrue(status.poll(0), "the capture is over: asked at once, not a further 32 intervals later");
        assertEquals(2, probe.queries);
        assertEquals(QueryPacing.STALE + 1, (clock.get() - lastQuery) / MS);
    }

    @Test
    void aClosedStreamIsNeverAskedAndStandsForNothing() {
        assertTrue(status.markClosed());
        assertFalse(status.markClosed(), "closed once");
        assertFalse(status.poll(0), "its device's next stream is asked instead");
        assertFalse(status.isCapturing());
        assertTrue(status.isIdle());
        assertEquals(0, probe.captureChecks + probe.queries);
    }

    /** Answers as told and counts the questions. */
    private static final class Probe implements StreamProbe {
        boolean capturing;
        int answer;
        int captureChecks;
        int queries;

        @Override
        public boolean capturing() {
            captureChecks++;
            return capturing;
        }

        @Override
        public int query() {
            queries++;
            return answer;
        }
    }
}
