package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The pacing of the CUDA streams' fault queries on an injected clock: one clean answer of a device's stream covers
 * the device's other streams for the interval, but not past {@link QueryPacing#STALE} intervals of a stream's own;
 * an assumed device and the stream's own interval are paced alone.
 */
class QueryPacingTest {
    private static final long MS = 1_000_000;
    private final AtomicLong clock = new AtomicLong(5 * MS);
    private final QueryPacing pacing = new QueryPacing(2, MS, clock::get);

    @Test
    void aCleanAnswerOfOneStreamCoversTheOtherStreamsOfItsDeviceForTheInterval() {
        long neverAsked = clock.get() - MS;
        assertTrue(pacing.due(0, neverAsked, clock.get()), "nothing answered yet: the first stream asks");
        pacing.clean(0, clock.get());
        clock.addAndGet(MS / 2);
        assertFalse(pacing.due(0, neverAsked, clock.get()), "another stream of device 0, half an interval later");
        assertTrue(pacing.due(1, neverAsked, clock.get()), "device 1 has its own answers");
        clock.addAndGet(MS / 2);
        assertTrue(pacing.due(0, neverAsked, clock.get()), "a whole interval later device 0 is asked again");
    }

    @Test
    void aStreamAskedLatelyWaitsForItsOwnIntervalWhateverItsDeviceSays() {
        long askedAt = clock.get();
        clock.addAndGet(MS / 4);
        assertFalse(pacing.due(0, askedAt, clock.get()));
        assertFalse(pacing.due(QueryPacing.ALONE, askedAt, clock.get()));
        clock.addAndGet(MS);
        assertTrue(pacing.due(0, askedAt, clock.get()));
    }

    @Test
    void aStreamPacedAloneIsNotCoveredByItsDevicesAnswersNorCoversThem() {
        long neverAsked = clock.get() - MS;
        pacing.clean(0, clock.get());
        assertTrue(pacing.due(QueryPacing.ALONE, neverAsked, clock.get()), "an assumed device is not device 0's");
        clock.addAndGet(2 * MS);
        pacing.clean(QueryPacing.ALONE, clock.get());
        assertTrue(pacing.due(0, neverAsked, clock.get()), "its answer says nothing of device 0");
        assertTrue(pacing.due(1, neverAsked, clock.get()));
    }

    @Test
    void aStreamPutOffByItsDevicesAnswersIsAskedOnceItsOwnAnswerIsStale() {
        long askedAt = clock.get();
        for (int i = 1; i < QueryPacing.STALE; i++) {
            clock.addAndGet(MS);
            pacing.clean(0, clock.get()); // another communicator's stream answers every interval
            assertFalse(pacing.due(0, askedAt, clock.get()), "put off after " + i + " intervals");
        }
        clock.addAndGet(MS);
        pacing.clean(0, clock.get());
        assertTrue(pacing.due(0, askedAt, clock.get()), "a stream's own fault is asked for at least this often");
    }

    @Test
    void aLateCleanAnswerNeverMovesTheDevicesTimeBack() {
        long neverAsked = clock.get() - 4 * MS;
        pacing.clean(0, clock.get());
        pacing.clean(0, clock.get() - 3 * MS); // a thread that read the clock earlier and wrote later
        clock.addAndGet(MS / 2);
        assertFalse(pacing.due(0, neverAsked, clock.get()));
    }
}
