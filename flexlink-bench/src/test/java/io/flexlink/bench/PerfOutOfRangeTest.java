package io.flexlink.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Values out of range end in FlexLink's error model, in one line: a chunk below one page is a usage error
 * naming the setting, a rank count beyond what one communicator may hold is a usage error naming -g (not
 * an OutOfMemoryError), and a size no machine can hold is an out-of-memory SYSTEM_ERROR (not a bare
 * IllegalArgumentException).
 */
class PerfOutOfRangeTest {
    private static PerfMainTest.Outcome perf(String line) {
        return PerfMainTest.perf(line.trim().split("\\s+"));
    }

    private static void oneLine(PerfMainTest.Outcome o) {
        assertEquals(1, o.errLines().stream().filter(l -> l.startsWith("flexlink-perf: ")).count(), o::toString);
        assertFalse(o.err.contains("\tat ") || o.err.contains("Exception") || o.err.contains("Error:"), o::toString);
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", "100", "4095"})
    void aChunkBelowOnePageIsAUsageErrorNamingTheSetting(String chunk) {
        PerfMainTest.Outcome o = perf("all_reduce -b 1M -e 1M -g 2 -n 1 -w 0 --backend host --chunk " + chunk);
        assertEquals(2, o.code, o::toString);
        oneLine(o);
        assertTrue(o.err.contains("flexlink.chunkBytes (FLEXLINK_CHUNK_BYTES): cannot use '" + chunk + "'"), o::toString);
    }

    @Test
    void moreRanksThanACommunicatorMayHaveIsAUsageErrorNamingG() {
        PerfMainTest.Outcome o = perf("all_reduce -b 1K -e 1K -n 1 -w 0 --backend host -g 2147483647");
        assertEquals(2, o.code, o::toString);
        oneLine(o);
        assertTrue(o.err.contains("-t x -g: at most 1024 ranks in one process"), o::toString);
    }

    @Test
    void aSizeBeyondAnyBufferIsAUsageErrorNamingTheOption() {
        PerfMainTest.Outcome o = perf("all_reduce -b 9223372036854775807 -e 9223372036854775807 -g 2 -n 1 -w 0"
                + " --backend host --chunk 4K --slots 2");
        assertEquals(2, o.code, o::toString);
        oneLine(o);
        assertTrue(o.err.contains("'--minbytes': '9223372036854775807' is too large a size"), o::toString);
    }

    /** A size the options accept but no machine holds: the host backend's memory budget refuses it. */
    @Test
    void aSizeNoMachineHoldsIsOutOfMemory() {
        PerfMainTest.Outcome o = perf("all_gather -b 1024G -e 1024G -g 2 -n 1 -w 0 --backend host --chunk 4K --slots 2");
        assertEquals(1, o.code, o::toString);
        oneLine(o);
        assertTrue(o.err.contains("SYSTEM_ERROR") && o.err.contains("out of memory"), o::toString);
    }
}
