package io.flexlink.cuda;

import io.flexlink.cuda.facade.NcclProgram;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The bytedeco-style program of {@link NcclProgram}, run through the facade. */
@Tag("gpu")
class FlexNcclGpuTest {
    @BeforeAll
    static void needsCuda() {
        GpuTests.assumeCuda();
    }

    @Test
    void oneRankEveryCall() {
        NcclProgram.oneRank((1 << 20) + 5);
    }

    @Test
    void uniqueIdAndInitRank() {
        NcclProgram.initRank(1000);
    }

    @Test
    void initAllOneDevice() {
        NcclProgram.initAll(new int[] {0}, 4096);
    }

    /** Issue #19's program: a grouped ncclAllReduce of 4M floats captured (global mode), replayed 20 times. */
    @Test
    void aCapturedAllReduceReplaysOnOneRankWithDefaultSettings() {
        io.flexlink.cuda.facade.GraphProgram.captureAndReplay(new int[] {0}, 4 << 20, 20);
    }

    @Test
    void initAllTwoRanksOnOneGpu() {
        NcclProgram.initAll(new int[] {0, 0}, 300_001);
    }
}
