package io.flexlink.nvshmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The collective decisions of {@link NvshmemSetup}, which every rank must reach alike. */
class NvshmemSetupTest {
    private static String state(String process, String session, int device) {
        return process + "|" + session + "|" + device + "|";
    }

    private static final String NONE = "-|-1|-1|-1";

    @Test
    void separateProcessesWithoutNvshmemInitialize() {
        assertEquals(NvshmemSetup.INIT, NvshmemSetup.decide(new String[] {state("a", NONE, 0), state("b", NONE, 1)}, 2));
        assertEquals(NvshmemSetup.INIT, NvshmemSetup.decide(new String[] {state("a", NONE, 0)}, 1));
    }

    @Test
    void ranksSharingAProcessAreRefused() {
        String d = NvshmemSetup.decide(new String[] {state("a", NONE, 0), state("b", NONE, 0), state("a", NONE, 1)}, 3);
        assertTrue(d.contains("ranks 0 and 2 share one process"), d);
    }

    @Test
    void aSessionOverTheSameRanksIsReused() {
        String[] s = {state("a", "77|0|2|0", 0), state("b", "77|1|2|3", 3)};
        assertEquals(NvshmemSetup.REUSE, NvshmemSetup.decide(s, 2));
    }

    @Test
    void aSessionOverOtherRanksOrDevicesIsRefused() {
        String d = NvshmemSetup.decide(new String[] {state("a", "77|0|1|0", 0), state("b", NONE, 0)}, 2);
        assertTrue(d.contains("rank 0's process already runs NVSHMEM as PE 0 of 1"), d);
        d = NvshmemSetup.decide(new String[] {state("a", "77|1|2|0", 0), state("b", "77|0|2|0", 0)}, 2);
        assertTrue(d.contains("already runs NVSHMEM"), d);
        d = NvshmemSetup.decide(new String[] {state("a", "77|0|1|2", 0)}, 1);
        assertTrue(d.contains("runs NVSHMEM on device 2, the communicator uses device 0"), d);
    }

    @Test
    void aBrokenProcessTurnsThePathOffEverywhere() {
        String d = NvshmemSetup.decide(new String[] {state("a", NONE, 0), "b|" + NONE + "|0|init hung | twice"}, 2);
        assertEquals("rank 1: init hung | twice", d);
    }

    @Test
    void onlyBuffersRetiredOnEveryRankAreFreed() {
        byte[][] all = {longs(1, 3, 4, 9), longs(3, 9), longs(0, 3, 4, 9)};
        assertEquals(List.of(3L, 9L), NvshmemSetup.commonIds(all));
        assertEquals(List.of(), NvshmemSetup.commonIds(new byte[][] {longs(1), longs()}));
    }

    @Test
    void theStagingLayoutIsAligned() {
        assertEquals(256, NvshmemChannel.signalBytes(1, 2));
        assertEquals(1024, NvshmemChannel.signalBytes(8, 8));
        // 3 ranks, 2 slots of 1000 B (stride 1024): signals + 2 send slots + 3 x 2 receive slots
        assertEquals(256 + 8 * 1024, NvshmemChannel.totalBytes(3, 2, 1000));
    }

    private static byte[] longs(long... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 8);
        for (long x : v) {
            b.putLong(x);
        }
        return b.array();
    }
}
